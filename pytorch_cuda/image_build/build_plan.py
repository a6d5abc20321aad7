"""The build plan: everything a build of one variant will do, computed without touching the engine, and the plans
of a build request's lineage (the requested variant, preceded by its parents).

Everything is decided here, before the engine is touched: the variant, the CA bundle, the build facts,
one build ID for the whole lineage, the registry, and the refusals (a missing lock, a stale images/).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.image_build.gitinfo import build_facts
from pytorch_cuda.locks.resolving import require_lock, stale_locks
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.flavours import lineage
from pytorch_cuda.matrix.image_folders import DOCKERFILE, variant_dir
from pytorch_cuda.matrix.labels import BuildFacts, build_labels
from pytorch_cuda.matrix.tags import TagSet, candidate_ref, tag_set
from pytorch_cuda.matrix.variants import Variant, select_variant
from pytorch_cuda.network.ca_bundle import find_ca_bundle
from pytorch_cuda.network.index_probe import probe_index
from pytorch_cuda.render import find_stale, render_variant
from pytorch_cuda.steps.remote_names import parse_registry, remote_tags
from pytorch_cuda.steps.sbom import SBOM_PATH

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
    # matrix.yaml's SOURCE_DATE_EPOCH: the time of every file (the Dockerfile's ARG) and of the bootstrapped base
    source_date_epoch: int | None = None
    created_epoch: int | None = None  # the commit's time: the config's `created` and history

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
            "source_date_epoch": self.source_date_epoch,
            "created_epoch": self.created_epoch,
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
        dockerfile=variant_dir(root, variant) / DOCKERFILE,
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
        source_date_epoch=matrix.project.source_date_epoch,
        created_epoch=facts.created_epoch,
    )


@dataclass(frozen=True)
class BuildRequest:
    """What `build.py build` / `build.py push` was asked for."""

    target: str
    flavour: str | None = None
    ca_bundle: Path | None = None  # --ca-bundle; else $PIP_CERT, $SSL_CERT_FILE or $REQUESTS_CA_BUNDLE
    dry_run: bool = False
    run_checks: bool = True
    no_cache: bool = False
    recheck: bool = False
    registry: str | None = None  # push: HOST[/NAMESPACE]
    push_candidate: bool = False


def plan_lineage(matrix: Matrix, request: BuildRequest, root: Path, facts: BuildFacts | None = None) -> list[BuildPlan]:
    """The requested variant's plan, preceded by its parents' (a child is built FROM its parent). `facts` (the
    revision and creation time) are read from git here unless given: a caller that plans several variants reads
    them once, so that a work tree changing meanwhile cannot give its images two revisions."""
    variants = lineage(matrix, select_variant(matrix, request.target, request.flavour))
    ca = find_ca_bundle(request.ca_bundle)
    ca_path = ca.path if ca else None
    facts = build_facts(root) if facts is None else facts
    build_id = uuid.uuid4().hex[:8]
    registry = parse_registry(request.registry) if request.registry else None
    if not request.dry_run:  # a missing lock is refused first, with its own fix (not "re-render")
        for variant in variants:
            require_lock(variant, root, lambda index: probe_index(index, ca_path))
    plans = []
    for variant in variants:
        _refuse_stale(matrix, variant, root)
        plans.append(
            make_plan(
                matrix,
                variant,
                root=root,
                facts=facts,
                build_id=build_id,
                ca_bundle=ca_path,
                ca_source=ca.source if ca else None,
                run_checks=request.run_checks,
                no_cache=request.no_cache,
                recheck=request.recheck,
                registry=registry,
                push_candidate=request.push_candidate,
            )
        )
    return plans


def _refuse_stale(matrix: Matrix, variant: Variant, root: Path) -> None:
    rendered = render_variant(matrix, variant, root / "templates", root)
    stale = find_stale(rendered, root, leftovers=False) + stale_locks(matrix, [variant], root)
    if stale:
        raise UserError(
            cause=f"images/{variant.key} does not match the templates and matrix.yaml "
            f"({', '.join(f'{s.path} {s.reason}' for s in stale)})",
            fix="run `python build.py render` (and commit images/) before building",
        )
