"""The build plan: everything a build of one variant will do, computed without touching the engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.labels import BuildFacts, build_labels
from pytorch_cuda.matrix import Matrix
from pytorch_cuda.registry import remote_tags
from pytorch_cuda.steps.sbom import SBOM_PATH
from pytorch_cuda.tags import TagSet, candidate_ref, tag_set
from pytorch_cuda.variants import Variant

PIP_CA_SECRET = "pip_ca"


@dataclass(frozen=True)
class BuildPlan:
    variant: Variant
    dockerfile: Path
    context: Path
    base_ref: str
    base_upstream: str | None
    index_url: str
    tags: TagSet
    candidate: str
    labels: dict[str, str]
    ca_bundle: Path | None
    ca_source: str | None
    run_checks: bool
    no_cache: bool = False
    recheck: bool = False  # rerun the in-image checks even when this image ID passed them before
    registry: str | None = None  # push --registry HOST[/NAMESPACE]: where the tags go after the local ones
    push_candidate: bool = False  # push --candidate: push only the candidate tag; no release tag moves remotely

    @property
    def pushed_tags(self) -> TagSet:
        """What push sends: the release tags, or with --candidate the candidate tag alone."""
        if self.push_candidate:
            return TagSet(repository=self.tags.repository, full=self.candidate.partition(":")[2], aliases=())
        return self.tags

    @property
    def remote_tags(self) -> TagSet | None:
        return remote_tags(self.pushed_tags, self.registry) if self.registry else None

    def _push_steps(self) -> list[str]:
        remote = self.remote_tags
        if remote is None:
            return []
        if not remote.aliases:
            return [f"push {remote.full_ref} alone (a candidate: no release tag moves in the registry)"]
        return [f"push {remote.full_ref} first, then the aliases {', '.join(remote.alias_refs)}"]

    def as_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant.key,
            "target": self.variant.target_name,
            "flavour": self.variant.flavour_name,
            "dockerfile": str(self.dockerfile),
            "context": str(self.context),
            "base": {"image": self.base_ref, "upstream": self.base_upstream, "fallback": "mmdebstrap bootstrap"},
            "index": self.index_url,
            "ca_bundle": {"path": str(self.ca_bundle), "from": self.ca_source, "as": f"secret {PIP_CA_SECRET}"}
            if self.ca_bundle
            else None,
            "candidate": self.candidate,
            "tags": list(self.tags.all_refs),
            "labels": self.labels,
            "checks": "conformance -m cpu (inside the candidate)" if self.run_checks else "skipped (--skip-checks)",
            "no_cache": self.no_cache,
            "push": list(self.remote_tags.all_refs) if self.remote_tags else None,
            "steps": [
                "check that images/ matches the templates",
                "check the engine, its disk and the package index",
                f"ensure base {self.base_ref} (local, else pull, else bootstrap)",
                f"build {self.dockerfile} -> {self.candidate}",
                (
                    "run the in-image checks" + ("" if self.recheck else " (unless this image ID passed them before)")
                    if self.run_checks
                    else "skip the in-image checks"
                ),
                f"take the SBOM out of the image ({SBOM_PATH}) into build-output/sbom-{self.variant.key}.cdx.json",
                f"tag {', '.join(self.tags.all_refs)} and drop the candidate tag",
                *self._push_steps(),
            ],
        }


def make_plan(
    matrix: Matrix,
    variant: Variant,
    *,
    root: Path,
    facts: BuildFacts,
    build_id: str,
    ca_bundle: Path | None,
    ca_source: str | None,
    run_checks: bool = True,
    no_cache: bool = False,
    recheck: bool = False,
    registry: str | None = None,
    push_candidate: bool = False,
) -> BuildPlan:
    tags = tag_set(matrix, variant)
    return BuildPlan(
        variant=variant,
        dockerfile=root / "images" / variant.key / "Dockerfile",
        context=root,
        base_ref=variant.base.image,
        base_upstream=variant.base.upstream,
        index_url=str(variant.target.index).rstrip("/"),
        tags=tags,
        candidate=candidate_ref(matrix, variant, build_id),
        labels=build_labels(variant, tags.full, facts),
        ca_bundle=ca_bundle,
        ca_source=ca_source,
        run_checks=run_checks,
        no_cache=no_cache,
        recheck=recheck,
        registry=registry,
        push_candidate=push_candidate,
    )
