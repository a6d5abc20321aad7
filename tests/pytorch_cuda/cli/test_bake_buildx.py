"""`build.py bake`'s file read by docker buildx itself: `docker buildx bake --print -f FILE GROUP...` must load it
and print back every target exactly as we wrote it (buildx drops an attribute it does not know, and refuses a
value of the wrong type or a group that names no target), each group with the same variants, and bake's default
group as ours. buildx runs standalone, without an engine: scripts/setup-buildx.sh installs Debian trixie's
docker-buildx (Debian 12 has none), else a docker client's own buildx plugin serves (GitHub's runners)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda import cli
from pytorch_cuda.bake import bake_file as bake_module
from pytorch_cuda.image_build.gitinfo import build_facts
from pytorch_cuda.matrix.labels import BuildFacts

ROOT = Path(__file__).resolve().parents[3]
INSTALLED = Path(os.environ.get("PYTORCH_CUDA_BUILDX", "/opt/pytorch-cuda/buildx/docker-buildx"))
SETS = (
    "*.cache-to=type=registry,ref=r/c,mode=max",
    "cu128-*.cache-from=type=registry,ref=r/c",
    "cu128-*.cache-from=type=local,src=/tmp/c",
    "*.pull=true",
    "cu130-*.no-cache=1",
    "*.labels.org.example.team=ml",
    "cu128-runtime.output=type=image,name=r/x,push=true",
    "cu128-runtime.tags+=r/x:extra",
)


CURRENT = Path(  # a current buildx (0.29+): `sudo scripts/setup-buildx.sh --current` puts Debian sid's there
    os.environ.get("PYTORCH_CUDA_BUILDX_CURRENT", "/opt/pytorch-cuda/buildx-current/docker-buildx")
)
OLD_PUSH = (0, 13)  # buildx 0.13 and older: push=BOOL appended to image and registry outputs, type=image,push=true
# added to a target with none whatever BOOL said; current buildx drops a registry output on false (build.py does)
OBJECT_LISTS = ("cache-from", "cache-to", "output", "secret", "attest")  # buildx >= 0.2x prints these as objects


@pytest.fixture(scope="module")
def _revision() -> BuildFacts:
    """The checkout's revision and time, read once for the module."""
    return build_facts(ROOT)


@pytest.fixture(autouse=True)
def _one_revision(_revision: BuildFacts, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test compares two bake runs made moments apart (buildx reads the first's file, the second applies the
    same --set): both get the revision read once, so a work tree that turns dirty between them (an edit, another
    test writing a tracked file) cannot put `-dirty` into one file's labels only (the flake on cu130's labels)."""
    monkeypatch.setattr(bake_module, "build_facts", lambda root: _revision)


def _buildx() -> list[str]:
    """The buildx command: the one setup-buildx.sh installs, else the docker client's plugin; none is a failure."""
    if INSTALLED.is_file():
        return [str(INSTALLED)]
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "buildx", "version"], capture_output=True).returncode == 0:
        return [docker, "buildx"]
    pytest.fail(f"no docker buildx here ({INSTALLED} nor a docker client's plugin): run sudo scripts/setup-buildx.sh")


@pytest.fixture(params=["installed", "current"])
def buildx(request: pytest.FixtureRequest) -> list[str]:
    """Each buildx the comparison runs with: setup-buildx.sh's (0.13.1), and a current one (0.29+, its binary
    in $PYTORCH_CUDA_BUILDX_CURRENT, default where `scripts/setup-buildx.sh --current` puts Debian sid's)."""
    if request.param == "installed":
        return _buildx()
    if not CURRENT.is_file():
        pytest.skip(
            f"no current buildx at {CURRENT}: run sudo scripts/setup-buildx.sh --current (Debian sid's 0.29.1), "
            "or set PYTORCH_CUDA_BUILDX_CURRENT to a buildx 0.29+ binary"
        )
    return [str(CURRENT)]


def version(command: list[str]) -> tuple[int, int]:
    """buildx's major and minor version, from `buildx version` (github.com/docker/buildx 0.13.1+ds1 ...)."""
    words = subprocess.run([*command, "version"], capture_output=True, text=True, check=True).stdout.split()
    major, minor = next(w for w in words if w[:1].isdigit() or w[:2] == "v0").lstrip("v").split(".")[:2]
    return int(major), int(minor)


def _print(
    path: Path, *names: str, command: list[str] | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [*(command or _buildx()), "bake", "--print", "-f", str(path), *names]
    return subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})})


def _printed(path: Path, *names: str, command: list[str] | None = None) -> dict[str, Any]:
    done = _print(path, *names, command=command)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def entry(value: Any) -> Any:
    """A list entry as buildx 0.29 prints it (an object of its CSV fields, values as text), from either form."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    fields = next(csv.reader([value])) if isinstance(value, str) and "=" in value else [value]
    return dict(field.partition("=")[::2] for field in fields)


def normal(target: dict[str, Any]) -> dict[str, Any]:
    """A bake target with its object-or-CSV list entries in one form, so 0.13.1's and 0.29's prints compare."""
    return {k: [entry(e) for e in v] if k in OBJECT_LISTS else v for k, v in target.items()}


def differences(ours: dict[str, Any], printed: dict[str, Any]) -> list[str]:
    """Where buildx's reading of our targets differs from what we wrote: an attribute dropped, changed or added."""
    found = []
    for name, written in ours["target"].items():
        target, theirs = normal(written), normal(printed["target"].get(name, {}))
        found += [
            f"{name}.{key}: wrote {target.get(key)!r}, buildx read {theirs.get(key)!r}"
            for key in sorted(set(target) | set(theirs))
            if target.get(key) != theirs.get(key)
        ]
    return found


@pytest.fixture
def bake_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The whole matrix's bake file, with a matrix.yaml group, a CA bundle and one --set of each kind."""
    matrix, bundle = tmp_path / "matrix.yaml", tmp_path / "ca.pem"
    matrix.write_text((ROOT / "matrix.yaml").read_text() + "\ngroups:\n  cuda12: [cu126, cu12]\n")
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("PIP_CERT", str(bundle))
    path = tmp_path / "docker-bake.json"
    argv = ["bake", "--matrix", str(matrix), "--file", str(path)]
    assert cli.main([*argv, *(f"--set={value}" for value in SETS)]) == 0, capsys.readouterr().err
    return path


def test_buildx_reads_back_every_target_and_group_as_we_wrote_them(bake_file: Path, buildx: list[str]) -> None:
    ours = json.loads(bake_file.read_text())
    named = sorted(name for name in ours["group"] if name != "default")  # buildx makes its own default of these
    printed = _printed(bake_file, *named, command=buildx)
    assert set(printed["target"]) == set(ours["target"])
    assert differences(ours, printed) == []
    for name in named:
        assert printed["group"][name] == ours["group"][name], name
    assert ours["group"]["cuda12"]["targets"] == ["cu126-jupyter", "cu126-runtime", "cu128-jupyter", "cu128-runtime"]
    default = _printed(bake_file, command=buildx)  # no name: bake's default group
    assert set(default["target"]) == set(ours["group"]["default"]["targets"]) == {"cu128-runtime"}
    assert differences({"target": {"cu128-runtime": ours["target"]["cu128-runtime"]}}, default) == []
    runtime = printed["target"]["cu128-runtime"]
    assert normal(runtime)["cache-to"] == [{"type": "registry", "ref": "r/c", "mode": "max"}]  # one entry
    assert normal(runtime)["cache-from"] == [{"type": "registry", "ref": "r/c"}, {"type": "local", "src": "/tmp/c"}]
    assert (runtime["pull"], runtime["tags"][-1]) == (True, "r/x:extra")


def test_buildx_catches_what_a_broken_bake_file_would_carry(bake_file: Path, tmp_path: Path, buildx: list[str]) -> None:
    """Each fault the comparison must catch: a wrong type, an attribute buildx does not know, a missing target."""
    ours = json.loads(bake_file.read_text())

    def broken(change: str) -> Path:
        document = json.loads(bake_file.read_text())
        runtime = document["target"]["cu128-runtime"]
        if change == "type":
            runtime["pull"] = "maybe"  # what the old --set wrote
        elif change == "unknown":
            runtime["cache_to"] = runtime.pop("cache-to")  # a misspelt key: buildx drops it without a word
        else:
            document["group"]["cu12"]["targets"].append("cu128-runtimee")
        path = tmp_path / f"{change}.json"
        path.write_text(json.dumps(document))
        return path

    refused = _print(broken("type"), "all", command=buildx)
    assert refused.returncode == 1
    assert "a bool is required" in refused.stderr
    dropped = broken("unknown")
    assert differences(json.loads(dropped.read_text()), _printed(dropped, "all", command=buildx)) == [
        "cu128-runtime.cache_to: wrote ['type=registry,ref=r/c,mode=max'], buildx read None"
    ]
    assert normal({"cache-to": [{"type": "registry", "ref": "r/c", "mode": "max"}]}) == normal(
        {"cache-to": ["type=registry,ref=r/c,mode=max"]}
    )  # 0.29's object entries read as 0.13.1's strings
    missing = _print(broken("group"), "cu12", command=buildx)
    assert missing.returncode == 1
    assert "failed to find target cu128-runtimee" in missing.stderr
    assert differences(ours, _printed(bake_file, "all", command=buildx)) == []  # the file itself stays clean


# `--set` cases that buildx and build.py must answer alike on the same file: the same targets printed, or both
# refusing. (version, ...) marks syntax buildx takes only from that version on; older ones refuse it, as checked.
# ("push", ...): build.py applies push as current buildx does; 0.13.1 did it the old way (docs/cli.md), so with
# it only the output lists may differ, and they are checked to.
AGREE: tuple[tuple[str, ...], ...] = (
    ("*.labels.org.example.team=ml",),
    ("cu128-*.args.X=1",),
    ("cu128-runtime.args.X=1", "cu128-runtime.args.X=2"),
    ("*.args.FROM_ENV",),
    ("*.args.NOT_IN_ENV",),
    ("cu12*.pull=true", "cu128-runtime.pull=f"),
    ("cu128-*.no-cache=1", "cu128-runtime.no-cache=false"),
    ("*.cache-to=type=registry,ref=r/c,mode=max",),
    ("cu128-*.cache-from=type=registry,ref=a", "cu128-runtime.cache-from=type=local,src=/tmp/b"),
    ("cu128-runtime.cache-to=type=inline", "cu128-runtime.cache-to=type=inline"),
    ("cu128-runtime.tags=r/x:1", "cu128-runtime.tags=r/x:2"),
    ("cu128-runtime.tags=r/x:1", "cu128-runtime.tags=r/x:1"),
    ("cu128-runtime.output=type=image,name=r/x,push=true",),
    ("push", "cu128-runtime.output=type=registry", "cu128-runtime.push=true"),  # either order: one answer
    ("push", "cu130-runtime.push=true"),
    ("push", "cu130-runtime.push=false"),
    ("cu128-runtime.context=.",),
    ("cu128-runtime.dockerfile=images/cu128-runtime/Dockerfile.other",),
    ("cu128-runtime.target=final",),
    ("cu128-jupyter.contexts.extra=docker-image://debian:trixie",),
    ("cu128-runtime.secrets=id=other,src={bundle}",),
    ("cu128-runtime.attest=type=sbom", "cu128-runtime.attest=type=provenance,mode=max"),
    ("cu128-runtime.shm-size=2g",),
    ("cu128-runtime.platform=linux/amd64",),
    ("[c]u130-devel.no-cache=true",),
    ("cu12.args.X=1",),  # an alias: no bake target of that name
    ("cu128.labels.a=b",),  # a matrix target: its variants are the bake targets
    ("all.no-cache=true",),  # a group
    ("default.no-cache=true",),  # bake's default group
    ("cu21.no-cache=true",),
    ("*.pull=maybe",),
    ("*.push=maybe",),
    ("*.contexts=x",),
    ("*.labels.x",),
    ("cu128-runtime",),
    ("0.18", "cu128-runtime.tags+=r/x:extra"),
    ("0.18", "cu128-runtime.cache-from=type=local,src=a", "cu128-runtime.cache-from+=type=local,src=b"),
)
# Where buildx itself varies: it applies one target's --set keys in Go's map order (Target.AddOverrides ranges
# over a map, https://github.com/docker/buildx/blob/v0.29.1/bake/bake.go; Go picks a new order each run,
# https://go.dev/ref/spec#For_range), and output and push both write the outputs. Output then push gives what
# build.py gives (push applied to the --set outputs); push then output leaves the --set outputs as given. Seen
# 2026-12-07, 100 runs each with 0.29.1: registry + push=false 90/10, image + push=false 86/14, docker +
# push=true 85/15 (registry + push=true gives one answer either way: AGREE holds it). Each case
# runs buildx up to VARIES_RUNS times: every answer must be one of the two orders', and build.py's must be among
# them. With 0.13.1 (old push, docs/cli.md) only the output lists may differ, as for the ("push", ...) cases.
VARIES: tuple[tuple[str, ...], ...] = (
    ("cu128-runtime.output=type=registry", "cu128-runtime.push=false"),
    ("cu128-runtime.output=type=image", "cu128-runtime.push=false"),
    ("cu128-runtime.output=type=docker", "cu128-runtime.push=true"),
)
VARIES_RUNS = 20  # build.py's order is buildx's in >= 85 of 100 runs: missing it 20 times is < 1e-16
# Where build.py refuses on purpose what buildx takes (docs/cli.md lists them): the project's own labels, a tag
# given to two images, a platform the locks are not resolved for, and the network (0.29.1 takes it and prints an
# empty network whatever the value; 0.13.1 refuses it as an unknown key, as checked). (0, 29): taken since.
DIFFER: tuple[tuple[str, str, tuple[int, int]], ...] = (
    (
        "*.labels.org.opencontainers.image.revision=evil",
        "the label org.opencontainers.image.revision is the project's",
        (0, 0),
    ),
    ("cu128-*.tags=r/x:1", "gives the tag r/x:1 to both cu128-jupyter and cu128-runtime", (0, 0)),
    ("*.platform=linux/arm64", "--platform linux/arm64 is not built", (0, 0)),
    ("*.network=host", "the network is not a --set key here", (0, 29)),
)


@pytest.fixture
def plain_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The matrix's bake file with no --set, the CA bundle in $PIP_CERT (a file buildx can stat for secrets)."""
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("PIP_CERT", str(bundle))
    monkeypatch.setenv("FROM_ENV", "from-the-environment")
    monkeypatch.delenv("NOT_IN_ENV", raising=False)
    path = tmp_path / "docker-bake.json"
    assert cli.main(["bake", "--file", str(path)]) == 0, capsys.readouterr().err
    return path


def _ours(capsys: pytest.CaptureFixture[str], sets: list[str]) -> tuple[int, dict[str, Any], str]:
    capsys.readouterr()
    status = cli.main(["bake", *(f"--set={s}" for s in sets)])
    out, err = capsys.readouterr()
    return status, json.loads(out) if status == 0 else {}, " ".join(err.split())


@pytest.mark.parametrize("case", AGREE, ids=" ".join)
def test_set_gives_what_buildx_gives(
    case: tuple[str, ...], plain_file: Path, buildx: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    marked = case[0][:1].isdigit() or case[0] == "push"
    since, sets = (case[0], list(case[1:])) if marked else (None, list(case))
    sets = [s.replace("{bundle}", os.environ["PIP_CERT"]) for s in sets]
    if {"output", "push"} <= set(map(key_of, sets)):  # buildx may apply them in either order: one answer here
        assert differences(_ours(capsys, sets)[1], _ours(capsys, push_first(sets))[1]) == [], "a VARIES case"
    theirs = _print(plain_file, "all", *(f"--set={s}" for s in sets), command=buildx, env=dict(os.environ))
    if since == "push" and version(buildx) <= OLD_PUSH:
        status, ours, _ = _ours(capsys, sets)
        assert {d.split(":")[0] for d in differences(ours, json.loads(theirs.stdout))} <= {
            "cu128-runtime.output",
            "cu130-runtime.output",
        }
        return
    if since and since != "push" and version(buildx) < tuple(int(p) for p in since.split(".")):
        assert theirs.returncode != 0, theirs.stdout  # older buildx: no +=
        assert "unknown key" in theirs.stderr
        return
    status, ours, err = _ours(capsys, sets)
    if theirs.returncode != 0:
        assert status == 2, f"buildx refused ({theirs.stderr.strip().splitlines()[-1]}); build.py took it"
        return
    assert status == 0, f"buildx took it; build.py refused: {err}"
    assert differences(ours, json.loads(theirs.stdout)) == []


def key_of(value: str) -> str:
    """A --set value's key, its pattern and any += left out: cu128-runtime.output=type=docker -> output."""
    return value.partition("=")[0].removesuffix("+").partition(".")[2]


def push_first(sets: list[str]) -> list[str]:
    """The --set values as buildx leaves them when it applies push before output: the output --set replaces the
    outputs push marked, so the push values count for nothing (the cases' outputs are plain `=`, never `+=`)."""
    assert not any(s.partition("=")[0].endswith("output+") for s in sets)
    return [s for s in sets if key_of(s) != "push"]


@pytest.mark.parametrize("case", VARIES, ids=" ".join)
def test_set_where_buildx_itself_varies(
    case: tuple[str, ...], plain_file: Path, buildx: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """buildx gives one of two answers, by the order Go's map hands it output and push: each answer it gives
    must be one of those two, and build.py's (output, then push) must be among them."""
    sets = list(case)
    assert {"output", "push"} <= set(map(key_of, sets))
    status, ours, _ = _ours(capsys, sets)
    status_first, pushed_first, _ = _ours(capsys, push_first(sets))
    assert (status, status_first) == (0, 0)
    assert differences(ours, pushed_first) != [], "both orders give one answer: the case belongs in AGREE"
    old = version(buildx) <= OLD_PUSH
    answers: list[dict[str, Any]] = []
    while len(answers) < VARIES_RUNS and not any(differences(ours, a) == [] for a in answers):
        theirs = _print(plain_file, "all", *(f"--set={s}" for s in sets), command=buildx)
        assert theirs.returncode == 0, theirs.stderr
        answers.append(json.loads(theirs.stdout))
        if old:  # 0.13.1: push applied the old way (docs/cli.md); only outputs differ
            assert {d.split(":")[0] for d in differences(ours, answers[0])} <= {"cu128-runtime.output"}
            return
    for answer in answers:
        assert differences(ours, answer) == [] or differences(pushed_first, answer) == [], (
            f"buildx gave neither order's answer: {differences(ours, answer)}"
        )
    assert differences(ours, answers[-1]) == [], f"buildx never gave build.py's answer in {VARIES_RUNS} runs"


@pytest.mark.parametrize("case", DIFFER, ids=[value for value, _, _ in DIFFER])
def test_the_documented_differences_hold(
    case: tuple[str, str, tuple[int, int]], plain_file: Path, buildx: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    value, says, since = case
    theirs = _print(plain_file, "all", f"--set={value}", command=buildx)
    if version(buildx) >= since:
        assert theirs.returncode == 0, theirs.stderr  # buildx takes it
    elif version(buildx) <= OLD_PUSH:
        assert "unknown key" in theirs.stderr  # 0.13.1 refuses it too
    status, _, err = _ours(capsys, [value])
    assert (status, says in err) == (2, True), err
