"""scripts/lint-ci.sh passes on the repository, and fails, naming the linter and the place, on broken copies."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytorch_cuda.action_pins import main as pins_main
from pytorch_cuda.action_pins import unpinned

ROOT = Path(__file__).resolve().parents[2]
LINT = ROOT / "scripts" / "lint-ci.sh"
CHECKOUT_SHA = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1"
CHECKOUT = f"{CHECKOUT_SHA} # v7.0.1"


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), str(tree)], capture_output=True, text=True, timeout=180)


def copy_tree(tmp_path: Path) -> Path:
    """What lint-ci.sh reads: the workflows and configs, the rendered Dockerfiles, the Kubernetes manifests."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / ".github", tree / ".github")
    shutil.copytree(ROOT / "deploy", tree / "deploy")
    shutil.copy(ROOT / ".hadolint.yaml", tree / ".hadolint.yaml")
    for dockerfile in ROOT.glob("images/*/Dockerfile"):
        target = tree / dockerfile.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(dockerfile, target)
    return tree


def edit(tree: Path, relative: str, old: str, new: str) -> None:
    path = tree / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{relative} no longer has {old!r}: update this test"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_repository_passes_every_ci_linter() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lint-ci: all CI linters passed" in result.stdout


def test_a_copy_of_the_repository_passes_too(tmp_path: Path) -> None:
    """The broken cases below differ from this one only by their one edit."""
    result = lint(copy_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


UPLOAD = "          name: conformance-${{ matrix.variant }}-${{ matrix.runner }}\n          path: out/\n"


@dataclass(frozen=True)
class Broken:
    relative: str  # the file to break
    old: str
    new: str
    needles: list[str]  # what the output must say
    linters: list[str]  # which linters must fail


BROKEN = [
    pytest.param(
        Broken(
            ".github/workflows/gpu-conformance.yml",
            "        with:\n" + UPLOAD,
            "        with: {name: conformance-${{ matrix.variant }}, path: out/}\n",
            ["could not parse as YAML", "did not find expected ',' or '}'"],
            ["actionlint", "check-jsonschema: workflows"],
        ),
        id="the old invalid flow mapping",
    ),
    pytest.param(
        Broken(
            ".github/workflows/pr.yml",
            "    runs-on: ubuntu-24.04\n",
            "    runs-on: [self-hosted, gpu-h100]\n",
            ['label "gpu-h100" is unknown'],
            ["actionlint"],
        ),
        id="a runner label no runner has",
    ),
    pytest.param(
        Broken(
            ".github/workflows/pr.yml",
            CHECKOUT,
            "actions/checkout@v7",
            ["uses: actions/checkout@v7: pinned by 'v7', which can be moved"],
            ["action pins"],
        ),
        id="an action pinned by a tag",
    ),
    pytest.param(
        Broken(
            ".github/workflows/release.yml",
            CHECKOUT,
            CHECKOUT_SHA,
            ["pinned by SHA but without a version comment"],
            ["action pins"],
        ),
        id="a SHA without its version",
    ),
    pytest.param(
        Broken(
            ".github/workflows/release.yml",
            '--check-tag "$TAG"',
            "--check-tag $TAG",
            ["SC2086", "Double quote to prevent globbing"],
            ["actionlint"],
        ),
        id="shellcheck in a run: script",
    ),
    pytest.param(
        Broken(
            ".github/workflows/pr.yml",
            "      - run: scripts/test.sh --unit\n",
            '      - run: echo "${{ github.event.pull_request.title }}"\n',
            ["is potentially untrusted"],
            ["actionlint"],
        ),
        id="an untrusted expression in a script",
    ),
    pytest.param(
        Broken(
            ".github/workflows/pr.yml",
            "    timeout-minutes: 30\n",
            "    timeout-minutes: thirty\n",
            ["is not valid under any of the given schemas"],
            ["check-jsonschema: workflows"],
        ),
        id="a value the workflow schema refuses",
    ),
    pytest.param(
        Broken(
            ".github/dependabot.yml",
            "interval: weekly",
            "interval: fortnightly",
            ["'fortnightly' is not one of"],
            ["check-jsonschema: dependabot"],
        ),
        id="a dependabot interval that does not exist",
    ),
    pytest.param(
        Broken(
            "images/cu128-runtime/Dockerfile",
            "USER 1000\n",
            "USER 0\n",
            ["DL3002", "Last USER should not be root"],
            ["hadolint"],
        ),
        id="an image that ends as root",
    ),
    pytest.param(
        Broken(
            "deploy/k8s/torchrun-2node.yaml",
            "runAsNonRoot: true",
            'runAsNonRoot: "yes"',
            ["'yes' is not of type 'boolean'"],
            ["kubernetes-validate"],
        ),
        id="a manifest the Kubernetes schema refuses",
    ),
]


@pytest.mark.parametrize("case", BROKEN)
def test_a_broken_file_fails_the_lint(tmp_path: Path, case: Broken) -> None:
    tree = copy_tree(tmp_path)
    edit(tree, case.relative, case.old, case.new)
    result = lint(tree)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for needle in case.needles:
        assert needle in output
    failed = output.split("lint-ci: FAILED: ")[1].splitlines()[0]
    for linter in case.linters:
        assert linter in failed, f"expected {linter} among the failed linters: {failed}"


def test_every_uses_is_pinned_by_sha_with_a_version_comment() -> None:
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows
    for path in workflows:
        assert unpinned(path, path.read_text(encoding="utf-8")) == [], path
    remote = [line for p in workflows for line in p.read_text().splitlines() if "uses:" in line and "./" not in line]
    assert len(remote) > 10  # the check above saw the real uses: lines


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (f"      - uses: {CHECKOUT}", None),
        (f'      - uses: "{CHECKOUT_SHA}" # v7', None),
        ("    uses: ./.github/workflows/gpu-conformance.yml", None),
        (f"      - uses: docker://alpine:3.21@sha256:{'a' * 64}", None),
        ("      - uses: docker://alpine:3.21", "pinned by @sha256"),
        ("      - uses: actions/cache/restore@v5 # v5.0.1", "which can be moved"),
        (f"      - uses: actions/checkout@{'a' * 39}", "which can be moved"),
        (f"      - uses: actions/checkout@{'a' * 40}", "without a version comment"),
        (f"      - uses: actions/checkout@{'a' * 40} # latest", "without a version comment"),
        ("      - uses: checkout", "not an owner/repo"),
    ],
)
def test_action_pin_rules(line: str, problem: str | None) -> None:
    found = unpinned(Path("w.yml"), f"steps:\n{line}\n")
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1
        assert problem in found[0].problem
        assert str(found[0]).startswith("w.yml:2: uses: ")


def test_the_pin_checker_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = tmp_path / "good.yml", tmp_path / "bad.yml"
    good.write_text(f"steps:\n  - uses: {CHECKOUT}\n", encoding="utf-8")
    bad.write_text("steps:\n  - uses: actions/checkout@main\n", encoding="utf-8")
    assert pins_main([str(good)]) == 0
    assert pins_main([str(good), str(bad)]) == 1
    assert "bad.yml:2: uses: actions/checkout@main: pinned by 'main'" in capsys.readouterr().out
    assert pins_main([]) == 2
