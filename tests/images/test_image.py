"""The real cu12 runtime image, built through build.py on a real engine from real PyPI wheels."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest

from pytorch_cuda.steps.in_image_checks import RESULTS_PATH
from tests.support.containers import CPU_CONFORMANCE, Finished, ImageRunner
from tests.support.integration import ROOT, BuiltImage, record_timing, run_build_py
from tests.support.layers import private_certificates, scan_image

pytestmark = pytest.mark.integration

EXPECTED_VERSIONS = "2.9.1+cu128 12.8 91002 (2, 27, 5)"


def test_versions_are_the_pins(built: BuiltImage, runner: ImageRunner) -> None:
    code = (
        "import torch; print(torch.__version__, torch.version.cuda, "
        "torch.backends.cudnn.version(), torch.cuda.nccl.version())"
    )
    finished = runner.run(built.ref, ["python", "-c", code])
    assert finished.exit_code == 0, finished.output
    assert finished.output.strip().splitlines()[-1] == EXPECTED_VERSIONS


def test_every_tag_points_at_the_built_image(built: BuiltImage, client: docker.DockerClient) -> None:
    image_id = built.result["image_id"]
    assert built.result["tags"][0] == "pytorch-cuda:2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    for ref in (*built.result["tags"], "pytorch-cuda:v2.9"):
        assert client.images.get(ref).id == image_id, ref
    # this build's candidate tag is gone; other lanes' builds run beside this test on the same engine, and their
    # candidates (the same image ID, since builds are reproducible) come and go while they run
    candidate = built.result["candidate"]
    assert candidate.startswith("pytorch-cuda:candidate-cu128-runtime-")
    leftovers = [t for image in client.images.list("pytorch-cuda") for t in image.tags if t == candidate]
    assert leftovers == []


def test_labels(built: BuiltImage, client: docker.DockerClient) -> None:
    labels = client.images.get(built.ref).labels
    assert labels["org.opencontainers.image.version"] == "2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert labels["org.opencontainers.image.title"] == "pytorch-cuda cu128-runtime"
    assert labels["org.opencontainers.image.source"].startswith("https://")
    assert len(labels["org.opencontainers.image.revision"].removesuffix("-dirty")) == 40
    assert labels["org.opencontainers.image.created"].endswith("Z")
    pins = {key.rsplit(".", 1)[-1]: value for key, value in labels.items() if key.startswith("dev.pytorch-cuda.")}
    assert pins["torch"] == "2.9.1+cu128"
    assert (pins["cuda"], pins["cudnn"], pins["nccl"], pins["triton"]) == ("12.8", "9.10.2.21", "2.27.5", "3.5.1")


def test_manifest_in_the_image_is_the_rendered_one(built: BuiltImage, runner: ImageRunner) -> None:
    finished = runner.run(built.ref, ["cat", "/etc/pytorch-cuda/manifest.json"])
    assert json.loads(finished.output) == json.loads((ROOT / "images/cu128-runtime/manifest.json").read_text())


def test_runs_as_non_root_who_owns_the_venv(
    built: BuiltImage, client: docker.DockerClient, runner: ImageRunner
) -> None:
    assert client.images.get(built.ref).attrs["Config"]["User"] == "1000"
    finished = runner.run(
        built.ref, ["sh", "-c", "id -u; test -w /opt/pytorch/lib/python3.13/site-packages && echo writable"]
    )
    assert finished.output.split() == ["1000", "writable"]
    cache = runner.run(built.ref, ["pip", "cache", "dir"])  # pip disables its cache when ~/.cache is not ours
    assert cache.exit_code == 0, cache.output
    assert cache.output.strip() == "/home/torch/.cache/pip"


BARE_COMPILE = (
    "import torch\n"
    "def f(x): return torch.sin(x) * 2 + x.cos()\n"
    "x = torch.randn(64)\n"
    "c = torch.compile(f)\n"
    "torch.testing.assert_close(c(x), f(x))\n"
    "print('compiled ok')\n"
)
BARE_COMPILE_STATUS = "bare torch.compile exit status: "


@dataclass(frozen=True)
class ColdCpuRun:
    """One container of the image as `docker run IMAGE ...` starts it (its user, no volume, an empty Inductor
    cache): a bare `torch.compile` first, then `conformance -m cpu`."""

    bare_status: int | None  # None: the line was not printed
    bare_output: str
    conformance: Finished


def run_cold(image: str, runner: ImageRunner) -> ColdCpuRun:
    """The bare compile, then the CPU checks, in one container of `image`: the compile runs first, on Inductor's
    defaults and an empty cache (its vector-ISA probe programs, its C++ header, its kernel: about 30 CPU-s, 19 of
    them the ISA probe), so it meets what a user's first `torch.compile` meets; the checks after it find the ISA
    programs in that cache and compile their own kernel. In two containers each paid the cold ISA probe."""
    script = (
        f'python -c {shlex.quote(BARE_COMPILE)}; status=$?; echo; echo "{BARE_COMPILE_STATUS}$status"; '
        f"exec {shlex.join(CPU_CONFORMANCE)}"
    )
    finished = runner.run(image, ["sh", "-c", script], results_path=RESULTS_PATH, timeout_s=1200)
    bare_output, found, rest = finished.output.partition(BARE_COMPILE_STATUS)
    status, _, after = rest.partition("\n")
    return ColdCpuRun(
        int(status) if found and status.strip().isdigit() else None,
        bare_output,
        Finished(finished.exit_code, after, finished.results),
    )


@pytest.fixture(scope="module")
def cold_cpu_run(built: BuiltImage, runner: ImageRunner) -> ColdCpuRun:
    return run_cold(built.ref, runner)


def test_torch_compile_runs_on_cpu(cold_cpu_run: ColdCpuRun) -> None:
    assert cold_cpu_run.bare_status == 0, cold_cpu_run.bare_output[-3000:]
    assert "compiled ok" in cold_cpu_run.bare_output


def test_cpu_conformance_passes_inside(cold_cpu_run: ColdCpuRun) -> None:
    finished = cold_cpu_run.conformance
    assert finished.exit_code == 0, finished.output[-3000:]
    assert finished.results is not None
    assert "== precision summary (no GPU) ==" in finished.output  # printed after pytest, exit status kept
    outcomes = finished.outcomes()
    passed = [name for name, outcome in outcomes.items() if outcome == "passed"]
    assert len(passed) >= 10, outcomes
    for name in ("test_torch_version_matches_pin", "test_cudnn_matches_pin", "test_nccl_matches_pin"):
        assert outcomes.get(name) == "passed", (name, outcomes)
    record_timing("conformance_cpu_counts", {o: list(outcomes.values()).count(o) for o in set(outcomes.values())})


def test_conformance_without_gpu_and_selection_fails_closed(built: BuiltImage, runner: ImageRunner) -> None:
    """`docker run IMAGE conformance` (the documented GPU command, no GPU passed) stops with one paragraph and exit
    status 4 instead of skipping the GPU checks into a pass."""
    finished = runner.run(built.ref, ["conformance", "-q"])
    assert finished.exit_code == 4, finished.output[-3000:]
    assert "no GPU is visible, and this run selects" in finished.output
    assert "`conformance -m cpu`" in finished.output
    assert "--gpus all" in finished.output


def test_conformance_gpu_selection_without_gpu_fails_closed(built: BuiltImage, runner: ImageRunner) -> None:
    """`docker run IMAGE conformance -m gpu` (a nightly's GPU selection on a runner whose GPU did not come up) stops
    with the same paragraph and exit status 4, not every GPU check skipped and exit 0 (issue 52)."""
    finished = runner.run(built.ref, ["conformance", "-q", "-m", "gpu"])
    assert finished.exit_code == 4, finished.output[-3000:]
    assert "no GPU is visible, and this run selects" in finished.output


def test_ca_bundle_is_in_no_layer_and_no_history(
    built: BuiltImage, client: docker.DockerClient, runner: ImageRunner, ca_bundle: Path | None
) -> None:
    assert ca_bundle is not None, "set PIP_CERT (or SSL_CERT_FILE) to the CA bundle the build used"
    image_bundles = runner.run(
        built.ref,
        [
            "sh",
            "-c",
            "cat /etc/ssl/certs/ca-certificates.crt "
            "/opt/pytorch/lib/python3.13/site-packages/pip/_vendor/certifi/cacert.pem",
        ],
    ).output
    private = private_certificates(ca_bundle.read_bytes(), image_bundles.encode())
    history = json.dumps(client.api.history(built.ref))
    assert "BEGIN CERTIFICATE" not in history
    assert str(ca_bundle) not in history
    found = scan_image(client, built.ref, whole_file=ca_bundle.read_bytes(), needles=private)
    record_timing("ca_scan", {"private_certificates": len(private), "layers_scanned": found.layers, "by": found.method})
    print(
        f"\nCA scan ({found.method}): {len(private)} private certificate(s), {found.layers} layers, "
        f"{found.bytes_read / 1e9:.2f} GB",
        file=sys.stderr,
    )
    assert found.layers > 0
    assert found.hits == [], found.hits


@pytest.mark.engine_builds  # runs build.py on this checkout
def test_rebuild_with_nothing_changed_is_cached_and_identical(built: BuiltImage) -> None:
    again, seconds = run_build_py("--target", "cu12", "--skip-checks")
    record_timing("rebuild_cu12_seconds", round(seconds, 1))
    assert again["image_id"] == built.result["image_id"]
    # Every Dockerfile step comes from the cache; FROM and the export report DONE, not CACHED.
    assert again["cached_steps"] >= again["total_steps"] - 2, again
    assert all(move["previous"] == move["now"] for move in again["moved"])


@pytest.mark.engine_builds  # runs build.py on this checkout
def test_target_with_unreachable_index_fails_cleanly(client: docker.DockerClient) -> None:
    """cu13 comes from PyTorch's own index; where it cannot be reached, exit 2 and build nothing."""
    import subprocess

    from pytorch_cuda.errors import EngineError
    from pytorch_cuda.network.index_probe import probe_index

    try:
        probe_index("https://download.pytorch.org/whl/cu130", None, timeout_s=10)
    except EngineError:
        pass
    else:
        pytest.skip("download.pytorch.org is reachable here; this test is about an air-gapped index")
    before = {tag for image in client.images.list("pytorch-cuda") for tag in image.tags}
    result = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--target", "cu13", "--json"], capture_output=True, text=True
    )
    assert result.returncode == 2
    error = json.loads(result.stdout)
    assert "download.pytorch.org/whl/cu130 is unreachable" in error["cause"]
    assert {tag for image in client.images.list("pytorch-cuda") for tag in image.tags} == before
