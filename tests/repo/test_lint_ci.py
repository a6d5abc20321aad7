"""scripts/lint-ci.sh passes on the repository, and fails, naming the linter and the place, on broken copies."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = ROOT / "scripts" / "lint-ci.sh"
CHECKOUT_SHA = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1"
CHECKOUT = f"{CHECKOUT_SHA} # v7.0.1"


def lint(tree: Path, only: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """lint-ci.sh on `tree`; with `only`, just the linters so named (LINT_CI_ONLY)."""
    env = {k: v for k, v in os.environ.items() if k != "LINT_CI_ONLY"}
    if only is not None:
        env["LINT_CI_ONLY"] = ",".join(only)
    return subprocess.run([str(LINT), str(tree)], capture_output=True, text=True, timeout=180, env=env)


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


def test_a_copy_of_the_repository_passes_every_ci_linter(tmp_path: Path) -> None:
    """The broken cases below differ from this one only by their one edit. (The repository itself is linted once,
    by scripts/test.sh's CI-configuration stage, which runs scripts/lint-ci.sh on it.)"""
    result = lint(copy_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lint-ci: all CI linters passed" in result.stdout


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
            ["unpinned-uses", "actions/checkout@v7"],
            ["zizmor"],
        ),
        id="an action pinned by a tag",
    ),
    pytest.param(
        Broken(
            ".github/workflows/pr.yml",
            "        with:\n          persist-credentials: false\n",
            "",
            ["artipacked", "credential persistence through GitHub Actions artifacts"],
            ["zizmor"],
        ),
        id="a checkout that leaves its token on disk",
    ),
    pytest.param(
        Broken(
            ".github/dependabot.yml",
            "    cooldown:\n      default-days: 7",
            "",
            ["dependabot-cooldown"],
            ["zizmor"],
        ),
        id="dependabot without a cooldown",
    ),
    pytest.param(
        Broken(
            ".github/workflows/gpu-conformance.yml",
            'echo "image=$(cat candidate/candidate.txt)" >> "$GITHUB_OUTPUT"',
            'echo "image=$(jq -r .image candidate/candidate.json)" >> "$GITHUB_OUTPUT"',
            ["assign each $(jq ...) to a variable of its own"],
            ["jq exit status"],
        ),
        id="a jq whose exit status is lost",
    ),
    pytest.param(
        Broken(
            ".github/workflows/release.yml",
            'check-tag "$TAG"',
            "check-tag $TAG",
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
            ".github/workflows/pr.yml",
            "    runs-on: ubuntu-24.04\n    timeout-minutes: 30\n",
            "    runs-on: [self-hosted, gpu-h200]\n    timeout-minutes: 30\n",
            ["pr.yml (on pull_request): job 'unit' of pr.yml can run on the self-hosted label 'self-hosted'"],
            ["self-hosted reach"],
        ),
        id="a pull-request job on a self-hosted runner",
    ),
    pytest.param(
        Broken(
            ".github/workflows/pr.yml",
            "  build-and-integration:\n",
            "  gpu:\n    uses: ./.github/workflows/gpu-conformance.yml\n  build-and-integration:\n",
            [
                "pr.yml (on pull_request) calls gpu-conformance.yml (job 'gpu'): job 'gpu' of gpu-conformance.yml can "
                "run on runner group '${{ matrix.group }}'",
                "job 'build' of gpu-conformance.yml can run on the expression '${{ matrix.labels }}'",
            ],
            ["self-hosted reach"],
        ),
        id="a pull-request workflow calling the GPU workflow",
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
    """Only the linters the case names run on its copy (the whole set runs on the clean copy above)."""
    tree = copy_tree(tmp_path)
    edit(tree, case.relative, case.old, case.new)
    result = lint(tree, only=case.linters)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for needle in case.needles:
        assert needle in output
    failed = output.split("lint-ci: FAILED: ")[1].splitlines()[0]
    for linter in case.linters:
        assert linter in failed, f"expected {linter} among the failed linters: {failed}"


def test_only_runs_the_named_linters_and_says_which_it_left_out(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    edit(tree, ".github/dependabot.yml", "interval: weekly", "interval: fortnightly")  # breaks one linter only
    passed = lint(tree, only=["hadolint"])
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "lint-ci: hadolint" in passed.stdout
    assert "not run (LINT_CI_ONLY=hadolint): actionlint" in passed.stdout
    assert "check-jsonschema: dependabot" in passed.stdout.split("not run")[1]
    assert "lint-ci: the selected CI linters passed" in passed.stdout
    failed = lint(tree, only=["hadolint", "check-jsonschema: dependabot"])
    assert failed.returncode == 1
    assert "lint-ci: FAILED: check-jsonschema: dependabot" in failed.stderr


def test_only_with_no_such_linter_exits_2_naming_them(tmp_path: Path) -> None:
    result = lint(copy_tree(tmp_path), only=["hadolnt"])
    assert result.returncode == 2
    assert "LINT_CI_ONLY=hadolnt names no linter" in result.stderr
    assert "kubernetes-validate: deploy/k8s" in result.stderr
