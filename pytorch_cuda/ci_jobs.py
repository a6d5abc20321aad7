"""`build.py ci-matrix`: the CI job matrix, generated from matrix.yaml and fleet.yaml.

One build job per variant that can be built, and one GPU job per (variant x runner of the fleet).
A variant whose lineage has no lock (images/<root variant>/requirements.lock, e.g. cu126 and cu130,
whose index was unreachable where the locks were made, or a child's requirements-flavour.lock) is left
out, and listed under "excluded" with the reason and the fix: its build would only fail, every
night, with the same exit 2.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.child_flavour import flavour_lock_path, lock_command
from pytorch_cuda.locks.writing import index_of, lock_path
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.flavours import lineage
from pytorch_cuda.matrix.fleet import Fleet, Runner
from pytorch_cuda.matrix.tags import tag_set
from pytorch_cuda.matrix.variants import Variant, all_variants


@dataclass(frozen=True)
class BuildEntry:
    """One build job: `build.py --target TARGET --flavour FLAVOUR`."""

    variant: str
    target: str
    flavour: str
    tag: str  # the immutable tag, e.g. 2.9.1-cuda12.8-cudnn9.10-py3.13-runtime
    repository: str
    aliases: tuple[str, ...]  # the moving tags a release points at the tested digest
    labels: tuple[str, ...]  # runs-on: fleet.yaml's builder


@dataclass(frozen=True)
class GpuEntry:
    """One GPU job: the variant's pushed candidate, run on one kind of runner."""

    name: str
    variant: str
    target: str
    flavour: str
    tag: str
    runner: str
    gpu: str
    gpus: int
    group: str  # runs-on: {group: GROUP, labels: LABELS}: fleet.yaml's runner group
    labels: tuple[str, ...]
    require: str  # conformance options: "--require-gpu" or "--require-gpu --require-gpus N"


@dataclass(frozen=True)
class Excluded:
    variant: str
    reason: str


@dataclass(frozen=True)
class GithubMatrix:
    build: tuple[BuildEntry, ...]
    gpu: tuple[GpuEntry, ...]
    excluded: tuple[Excluded, ...]

    def as_dict(self) -> dict[str, object]:
        """The shape `strategy.matrix: ${{ fromJSON(...) }}` takes: {"include": [...]} per job."""
        return {
            "build": {"include": [asdict(e) for e in self.build]},
            "gpu": {"include": [asdict(e) for e in self.gpu]},
            "excluded": [asdict(e) for e in self.excluded],
        }

    def step_outputs(self) -> dict[str, str]:
        """The workflow's `build` and `gpu` outputs: each job's matrix as one line of JSON."""
        jobs = self.as_dict()
        return {name: json.dumps(jobs[name], separators=(",", ":")) for name in ("build", "gpu")}

    def summary(self) -> str:
        """The run's jobs, as the job summary lists them: each build, each GPU job, each variant left out."""
        lines = ["### Jobs of this run"]
        lines += [f"- build `{b.variant}`: `{b.repository}:{b.tag}`" for b in self.build]
        lines += [f"- conformance `{g.name}`: {g.gpus} x {g.gpu}, `conformance {g.require}`" for g in self.gpu]
        lines += [f"- **not built: `{e.variant}`**: {e.reason}" for e in self.excluded]
        return "\n".join(lines) + "\n"


def missing_lock(matrix: Matrix, variant: Variant, root: Path) -> str | None:
    """Why this variant cannot be built from committed locks (its root's, then each child's own), or None."""
    chain = lineage(matrix, variant)
    first = chain[0]
    path = lock_path(root, first)
    if path.exists():
        child = next((v for v in chain[1:] if not flavour_lock_path(root, v).exists()), None)
        if child is None:
            return None
        return (
            f"{flavour_lock_path(root, child).relative_to(root)} does not exist, so `build.py --target "
            f"{variant.target_name} --flavour {variant.flavour_name}` would exit 2; run `{lock_command(child)}` "
            "and commit the lock"
        )
    return (
        f"{path.relative_to(root)} does not exist (its index {index_of(first)} was not reachable where the locks "
        f"were made), so `build.py --target {variant.target_name} --flavour {variant.flavour_name}` would exit 2; "
        f"run `build.py lock --target {first.target_name}` where that index is reachable and commit the lock"
    )


def _build_entry(matrix: Matrix, variant: Variant, fleet: Fleet) -> BuildEntry:
    tags = tag_set(matrix, variant)
    return BuildEntry(
        variant=variant.key,
        target=variant.target_name,
        flavour=variant.flavour_name,
        tag=tags.full,
        repository=tags.repository,
        aliases=tags.aliases,
        labels=fleet.builder.labels,
    )


def _gpu_entry(build: BuildEntry, name: str, runner: Runner) -> GpuEntry:
    return GpuEntry(
        name=f"{build.variant} on {name}",
        variant=build.variant,
        target=build.target,
        flavour=build.flavour,
        tag=build.tag,
        runner=name,
        gpu=runner.gpu,
        gpus=runner.gpus,
        group=runner.group,
        labels=runner.labels,
        require=" ".join(runner.require_args),
    )


def github_matrix(matrix: Matrix, fleet: Fleet, root: Path) -> GithubMatrix:
    """Every buildable variant, and every (buildable variant x runner); the rest excluded with a reason."""
    builds: list[BuildEntry] = []
    excluded: list[Excluded] = []
    for variant in all_variants(matrix):
        reason = missing_lock(matrix, variant, root)
        if reason is None:
            builds.append(_build_entry(matrix, variant, fleet))
        else:
            excluded.append(Excluded(variant.key, reason))
    if not builds:
        raise UserError(
            cause="no variant of the matrix can be built: " + "; ".join(e.reason for e in excluded),
            fix="lock at least one target (`build.py lock --target cu12`) and commit its requirements.lock",
        )
    gpu = [_gpu_entry(b, name, runner) for b in builds for name, runner in sorted(fleet.runners.items())]
    return GithubMatrix(tuple(builds), tuple(gpu), tuple(excluded))
