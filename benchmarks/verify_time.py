"""`build.py release verify`, wall time and peak memory, whatever the registry serves (issue 51's Done-when: under
3 s and under 1 GB), side by side with the naive verify that reads what it is served without a bound.

    .venv/bin/python benchmarks/verify_time.py [--rounds N] [--blob-bytes N] [--naive-blob-rounds N] [--baseline C]

It starts a docker-registry of its own on a free loopback port (its storage in a temporary folder, removed after),
releases a tiny image there as the release tests do (a checkout with its own keys and root, `sign --tag`,
`promote`), and times the command a user types, `python build.py release verify REPO:v9.9`, run from the
checkout with a new, empty cache each time (a first-time verifier), for:

- an honest release (exit 0; there is no naive alternative);
- a `.sig` padded with 1,200 junk signature layers before the real one (HEAD: refused before any is read);
- 1,000 junk Sigstore bundle referrers listed before the keyless bundle, under a policy that requires the keyless
  builder (HEAD: too many candidates, none read; both refuse: the bundle is another project's, as in
  tests/support/keyless_bundle.py);
- a `.sig` whose first layer is a blob of several GB (3 GiB by default, streamed into the registry; HEAD: refused by
  its declared size before a byte is read).

The naive alternative is the same command with verify's bounds lifted in the child (`python -c` sets the caps to
2**40, then runs build.py): every .sig layer read and tried, every referrer read, the whole blob read and hashed,
which is what verify did before issue 51. The baseline is the same command from a copy of the checkout whose
packages are the baseline commit's (`git archive`; default e539dc4, main before build.py loaded only the verb it
runs). Runs alternate HEAD, baseline, naive. Python writes its bytecode cache as on a user's machine
(PYTHONDONTWRITEBYTECODE is dropped; one untimed run per tree first). Each run's wall time and its own peak RSS
(wait4's ru_maxrss) are printed as a table of medians and written to benchmarks/verify_time.json.
docs/release.md quotes the numbers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytorch_cuda.release.cosign_layout import OCI_INDEX, SIGNATURE_ANNOTATION, SIMPLE_SIGNING  # noqa: E402
from tests.support import local_registry  # noqa: E402
from tests.support.keyless_bundle import BUNDLE, BUNDLE_TYPE, attach_bundle  # noqa: E402
from tests.support.release_checkout import OCI_MANIFEST, PASSPHRASE, Checkout, make_checkout, skopeo_copy  # noqa: E402
from tests.support.throwaway_registry import (  # noqa: E402
    push_streamed_blob,
    put_sig,
    sig_layers,
    throwaway_registry,
)

OUT = ROOT / "benchmarks" / "verify_time.json"
PADDED_LAYERS = 1200
JUNK_REFERRERS = 1000
LIFTED = 1 << 40
NAIVE = {  # verify's bounds, lifted in the child before build.py runs
    "padded .sig": f"import pytorch_cuda.release.verify as v; v.MOST_SIGNATURE_LAYERS = {LIFTED}",
    "junk referrers": "import pytorch_cuda.release.builder_proof as b; "
    f"b.MOST_CANDIDATES = b.MOST_CANDIDATE_BYTES = {LIFTED}",
    "blob under .sig": "from pytorch_cuda.oci.registry_client import RegistryClient as C; "
    f"C.blob.__defaults__ = ({LIFTED},)",
}
RUN_BUILD_PY = (
    "import runpy, sys; sys.argv = ['build.py', *sys.argv[1:]]; runpy.run_path('build.py', run_name='__main__')"
)


@dataclass(frozen=True)
class Run:
    status: int
    seconds: float
    peak_rss_mib: float
    said: str  # the last line of stderr (a refusal's reason), or of stdout


def verify(folder: Path, image: str, scratch: Path, lift: str | None) -> Run:
    """The user's command from the checkout `folder`, with an empty cache; `lift`: the naive child, its bounds
    lifted."""
    cache = Path(tempfile.mkdtemp(prefix="verify-cache-", dir=scratch))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(cache), RELEASE_KEY_PASSPHRASE=PASSPHRASE)
    args = ["release", "verify", image]
    command = (
        [sys.executable, "build.py", *args]
        if lift is None
        else [sys.executable, "-c", f"{lift}; {RUN_BUILD_PY}", *args]
    )
    out, err = scratch / "verify.out", scratch / "verify.err"
    started = time.perf_counter()
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen(command, cwd=folder, env=env, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    text = " ".join((err.read_text() or out.read_text()).split())
    said = text.split(" Fix: ")[0][-300:] if "error:" in text else text[-120:]
    return Run(child.returncode, round(seconds, 3), round(usage.ru_maxrss / 1024, 1), said)


def released(checkout: Checkout, tag: str) -> str:
    digest = checkout.candidate("candidate", "a" * 40)
    checkout.sign(f"{checkout.repository}@{digest}", "release", tag)
    promoted = checkout.release("promote", f"{checkout.repository}@{digest}", "--tag", tag)
    if promoted.returncode != 0:
        raise RuntimeError(promoted.stderr)
    return digest


PACKAGES = ("pytorch_cuda", "pytorch_cuda_contract", "pytorch_cuda_entry", "pytorch_cuda_sbom", "conformance",
            "precision_check", "templates")  # what make_checkout links from the repository  # fmt: skip


def baseline_of(checkout: Checkout, source: Path) -> Path:
    """A copy of the checkout (policy, keys, root, locks) whose packages are the baseline commit's, from `source`."""
    folder = checkout.folder.with_name(f"{checkout.folder.name}-baseline")
    shutil.copytree(checkout.folder, folder, symlinks=True, ignore=shutil.ignore_patterns("cache"))
    for package in PACKAGES:
        (folder / package).unlink()
        (folder / package).symlink_to(source / package, target_is_directory=True)
    return folder


def junk_referrers(checkout: Checkout, digest: str, count: int) -> None:
    """`count` junk bundle manifests pushed and listed before the real bundle in the `sha256-<hex>` index."""
    base = f"http://{local_registry.REGISTRY_HOST}/v2/{checkout.path}/manifests"
    empty = {"mediaType": "application/vnd.oci.empty.v1+json", "size": 2,
             "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest()}  # fmt: skip
    tag = digest.replace(":", "-")
    index = requests.get(f"{base}/{tag}", headers={"Accept": OCI_INDEX}, timeout=30).json()
    junk = []
    with requests.Session() as session:
        for n in range(count):
            raw = json.dumps({"schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": BUNDLE_TYPE,
                              "config": empty, "layers": [], "annotations": {"junk": str(n)}}).encode()  # fmt: skip
            junk_digest = "sha256:" + hashlib.sha256(raw).hexdigest()
            session.put(f"{base}/{junk_digest}", data=raw, headers={"Content-Type": OCI_MANIFEST}, timeout=30)
            junk.append({"mediaType": OCI_MANIFEST, "artifactType": BUNDLE_TYPE, "size": len(raw),
                         "digest": junk_digest})  # fmt: skip
    index["manifests"] = junk + index["manifests"]
    put = requests.put(
        f"{base}/{tag}", data=json.dumps(index).encode(), headers={"Content-Type": OCI_INDEX}, timeout=60
    )
    if put.status_code != 201:
        raise RuntimeError(put.text)


def _median(runs: list[Run], field: Callable[[Run], float]) -> float:
    return round(statistics.median(field(r) for r in runs), 2)


def _cell(runs: list[Run]) -> str:
    if not runs:
        return "(none)"
    seconds = [r.seconds for r in runs]
    return (f"exit {runs[0].status}, {_median(runs, lambda r: r.seconds):.2f} s ({min(seconds):.2f}-"
            f"{max(seconds):.2f}), {_median(runs, lambda r: r.peak_rss_mib):.0f} MiB")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="runs of each command per case (default: 5)")
    parser.add_argument("--blob-bytes", type=int, default=3 << 30, help="the blob's size (default: 3 GiB)")
    parser.add_argument("--naive-blob-rounds", type=int, default=1,
                        help="runs of the naive verify on the blob: each holds it in memory (default: 1)")  # fmt: skip
    parser.add_argument("--baseline", default="e539dc4", help="the commit to compare with (default: %(default)s)")
    args = parser.parse_args()
    results: dict[str, dict[str, list[Run]]] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="verify-time-") as temporary:
        scratch = Path(temporary)
        source = scratch / "baseline-source"
        source.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, *PACKAGES], capture_output=True,
                                 check=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
        with throwaway_registry(scratch) as host:
            plain = make_checkout(scratch / "plain", f"{host}/ci/verify-time")
            image = released(plain, "v9.9")
            keyless = make_checkout(scratch / "keyless", f"{host}/ci/verify-time-keyless", keyless=True)
            bound = keyless.candidate("candidate", "a" * 40)
            skopeo_copy(f"{keyless.repository}@{bound}", f"{keyless.repository}:v9.9")
            keyless.sign(f"{keyless.repository}@{bound}", "release", "v9.9")
            attach_bundle(keyless, bound, BUNDLE)
            junk_referrers(keyless, bound, JUNK_REFERRERS)
            real = sig_layers(host, plain.path, image)
            padded = [{**real[0], "annotations": {SIGNATURE_ANNOTATION: "AAAA"}}] * PADDED_LAYERS
            huge = {"mediaType": SIMPLE_SIGNING, "size": args.blob_bytes, "annotations": {SIGNATURE_ANNOTATION: ""}}
            cases: list[tuple[str, Checkout, Callable[[], None], int]] = [
                ("honest release", plain, lambda: put_sig(host, plain.path, image, real), 0),
                (f"padded .sig ({PADDED_LAYERS} junk layers)", plain,
                 lambda: put_sig(host, plain.path, image, [*padded, *real]), args.rounds),
                (f"junk referrers ({JUNK_REFERRERS} before the bundle)", keyless, lambda: None, args.rounds),
                (f"blob under .sig ({args.blob_bytes / 2**30:.1f} GiB)", plain,
                 lambda: put_sig(host, plain.path, image,
                                 [{**huge, "digest": push_streamed_blob(host, plain.path, args.blob_bytes)}, *real]),
                 args.naive_blob_rounds),
            ]  # fmt: skip
            baselines = {plain.folder: baseline_of(plain, source), keyless.folder: baseline_of(keyless, source)}
            for folder in (*baselines, *baselines.values()):  # untimed: Python writes its bytecode cache
                verify(folder, f"{plain.repository}:v9.9", scratch, None)
            for name, checkout, attack, naive_rounds in cases:
                attack()
                lift = next((code for key, code in NAIVE.items() if name.startswith(key)), None)
                ref = f"{checkout.repository}:v9.9"
                runs: dict[str, list[Run]] = {"head": [], "baseline": [], "naive": []}
                for round_ in range(args.rounds):  # alternating: HEAD, the baseline, the naive one
                    runs["head"].append(verify(checkout.folder, ref, scratch, None))
                    runs["baseline"].append(verify(baselines[checkout.folder], ref, scratch, None))
                    if lift is not None and round_ < naive_rounds:
                        runs["naive"].append(verify(checkout.folder, ref, scratch, lift))
                results[name] = runs
                print(f"{name}: HEAD {_cell(runs['head'])}; baseline {_cell(runs['baseline'])}; naive "
                      f"{_cell(runs['naive'])}", flush=True)  # fmt: skip
    load = os.getloadavg()
    print(f"\n`build.py release verify`, a fresh cache each run, medians of {args.rounds} (naive blob: "
          f"{args.naive_blob_rounds}); wall seconds (min-max), peak RSS; load average {load_before[0]:.1f} before, "
          f"{load[0]:.1f} after, {os.cpu_count()} cores")  # fmt: skip
    print(f"| case | HEAD | baseline {args.baseline} | naive (HEAD, bounds lifted) |\n|---|---|---|---|")
    for name, runs in results.items():
        print(f"| {name} | {_cell(runs['head'])} | {_cell(runs['baseline'])} | {_cell(runs['naive'])} |")
    for name, runs in results.items():
        for kind, found in runs.items():
            if found:
                print(f"{name}, {kind}: {found[0].said}")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    OUT.write_text(json.dumps({
        "commit": head.stdout.strip(), "baseline": args.baseline, "machine": platform.node(), "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before], "load_average_after": [round(x, 2) for x in load],
        "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
        "cases": {name: {kind: [asdict(r) for r in found] for kind, found in runs.items()}
                  for name, runs in results.items()},
    }, indent=1) + "\n")  # fmt: skip
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
