"""`build.py ci-matrix`: the CI jobs, generated from matrix.yaml and fleet.yaml."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytorch_cuda.ci_jobs import github_matrix
from pytorch_cuda.console.github_step import write_step_outputs
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.fleet import Fleet, load_fleet
from pytorch_cuda.matrix.tags import tag_set
from pytorch_cuda.matrix.variants import all_variants

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    return load_fleet(ROOT / "fleet.yaml")


def locked_tree(tmp_path: Path, *variants: str) -> Path:
    for key in variants:
        name = "requirements.lock" if key.endswith("-runtime") else "requirements-flavour.lock"
        lock = tmp_path / "images" / key / name
        lock.parent.mkdir(parents=True)
        lock.write_text("# a lock\n", encoding="utf-8")
    return tmp_path


def test_every_variant_is_built_or_excluded_with_a_reason(matrix: Matrix, fleet: Fleet) -> None:
    jobs = github_matrix(matrix, fleet, ROOT)
    built = {b.variant for b in jobs.build}
    excluded = {e.variant: e.reason for e in jobs.excluded}
    assert built | set(excluded) == {v.key for v in all_variants(matrix)}
    assert not built & set(excluded)
    # cu128 is locked; cu126 and cu130 come from download.pytorch.org, unreachable where the locks were made
    assert built == {"cu128-runtime", "cu128-jupyter"}
    assert set(excluded) == {"cu126-runtime", "cu126-jupyter", "cu130-runtime", "cu130-jupyter", "cu130-devel"}
    assert "images/cu130-runtime/requirements.lock does not exist" in excluded["cu130-devel"]
    assert "download.pytorch.org/whl/cu130" in excluded["cu130-devel"]
    assert "build.py lock --target cu130" in excluded["cu130-devel"]


def test_build_entries_carry_the_tags_the_build_makes(matrix: Matrix, fleet: Fleet) -> None:
    variants = {v.key: v for v in all_variants(matrix)}
    for entry in github_matrix(matrix, fleet, ROOT).build:
        tags = tag_set(matrix, variants[entry.variant])
        assert (entry.target, entry.flavour) == (variants[entry.variant].target_name, entry.variant.split("-")[1])
        assert (entry.repository, entry.tag, entry.aliases) == (tags.repository, tags.full, tags.aliases)
        assert entry.labels == fleet.builder.labels
    runtime = next(b for b in github_matrix(matrix, fleet, ROOT).build if b.variant == "cu128-runtime")
    assert runtime.tag == "2.9.1-cuda12.8-cudnn9.10-py3.13-runtime"
    assert "v2.9" in runtime.aliases


def test_one_gpu_job_per_built_variant_and_runner(matrix: Matrix, fleet: Fleet) -> None:
    jobs = github_matrix(matrix, fleet, ROOT)
    pairs = {(g.variant, g.runner) for g in jobs.gpu}
    assert pairs == {(b.variant, r) for b in jobs.build for r in fleet.runners}
    assert len(jobs.gpu) == len(pairs)
    two = next(g for g in jobs.gpu if g.runner == "h200x2" and g.variant == "cu128-runtime")
    assert two.require == "--require-gpu --require-gpus 2"
    assert two.labels == fleet.runners["h200x2"].labels
    assert two.group == fleet.runners["h200x2"].group == "gpu-conformance"  # runs-on: {group, labels}
    assert two.name == "cu128-runtime on h200x2"
    one = next(g for g in jobs.gpu if g.runner == "h200")
    assert one.require == "--require-gpu"


def test_a_locked_target_joins_the_matrix(matrix: Matrix, fleet: Fleet, tmp_path: Path) -> None:
    jobs = github_matrix(matrix, fleet, locked_tree(tmp_path / "root", "cu126-runtime"))
    assert {b.variant for b in jobs.build} == {"cu126-runtime"}  # the child needs its own lock too
    reason = next(e.reason for e in jobs.excluded if e.variant == "cu126-jupyter")
    assert "images/cu126-jupyter/requirements-flavour.lock does not exist" in reason
    assert "build.py lock --target cu126 --flavour jupyter" in reason
    jobs = github_matrix(matrix, fleet, locked_tree(tmp_path / "both", "cu126-runtime", "cu126-jupyter"))
    assert {b.variant for b in jobs.build} == {"cu126-runtime", "cu126-jupyter"}


def test_nothing_buildable_is_bad_input(matrix: Matrix, fleet: Fleet, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no variant of the matrix can be built") as caught:
        github_matrix(matrix, fleet, tmp_path)
    assert "build.py lock" in caught.value.fix


def test_the_cli_prints_the_matrix_as_json(matrix: Matrix, fleet: Fleet) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "ci-matrix"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(json.dumps(github_matrix(matrix, fleet, ROOT).as_dict()))


def test_the_cli_writes_the_step_outputs_and_the_job_summary(matrix: Matrix, fleet: Fleet, tmp_path: Path) -> None:
    """What the workflow's step reads: `build` and `gpu` as one line of JSON each, and the jobs listed in Markdown."""
    output, summary = tmp_path / "github_output", tmp_path / "summary.md"
    output.write_text("earlier=1\n", encoding="utf-8")  # a step's file is appended to, never replaced
    argv = [sys.executable, str(ROOT / "build.py"), "ci-matrix", "--github-output", str(output)]
    result = subprocess.run([*argv, "--summary", str(summary)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    jobs = github_matrix(matrix, fleet, ROOT)
    lines = output.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "earlier=1"
    written = dict(line.split("=", 1) for line in lines[1:])
    assert set(written) == {"build", "gpu"}
    expected = json.loads(json.dumps(jobs.as_dict()))
    assert {k: json.loads(v) for k, v in written.items()} == {"build": expected["build"], "gpu": expected["gpu"]}
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("### Jobs of this run\n")
    assert "- build `cu128-runtime`: `" in text
    assert f"- conformance `{jobs.gpu[0].name}`: {jobs.gpu[0].gpus} x {jobs.gpu[0].gpu}" in text
    assert "- **not built: `cu130-devel`**: images/cu130-runtime/requirements.lock does not exist" in text


def test_a_step_output_with_a_line_break_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line break"):
        write_step_outputs(tmp_path / "out", {"body": "two\nlines"})
    assert not (tmp_path / "out").exists()


def test_the_cli_names_a_bad_fleet(tmp_path: Path) -> None:
    bad = tmp_path / "fleet.yaml"
    bad.write_text(
        "schema: 1\nbuilder: {labels: [ubuntu-24.04]}\n"
        "runners:\n  a: {group: g, gpu: H200, gpus: 1, labels: [linux, gpu-h200]}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "ci-matrix", "--fleet", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "must include 'self-hosted'" in result.stderr


@pytest.mark.parametrize(
    ("workflow", "job", "kind"),
    [
        ("gpu-conformance.yml", "build", "build"),
        ("gpu-conformance.yml", "gpu", "gpu"),
        ("release.yml", "publish", "build"),
    ],
)
def test_the_workflows_read_only_fields_the_generator_writes(
    matrix: Matrix, fleet: Fleet, workflow: str, job: str, kind: str
) -> None:
    jobs = yaml.safe_load((WORKFLOWS / workflow).read_text(encoding="utf-8"))["jobs"]
    used = set(re.findall(r"(?<![.\w])matrix\.([a-z_]+)", json.dumps(jobs[job])))
    entry = github_matrix(matrix, fleet, ROOT).as_dict()[kind]
    assert isinstance(entry, dict)
    fields = set(entry["include"][0])
    assert used, f"{workflow} job {job} reads no matrix field"
    assert used <= fields, f"{workflow} job {job} reads matrix fields the generator does not write: {used - fields}"
