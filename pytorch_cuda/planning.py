"""From a build request to the plans of its lineage: the requested variant, preceded by its parents.

Everything is decided here, before the engine is touched: the variant, the CA bundle, the build facts,
one build ID for the whole lineage, the registry, and the refusals (a missing lock, a stale images/).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.flavours import lineage
from pytorch_cuda.gitinfo import build_facts
from pytorch_cuda.locks.resolving import require_lock, stale_locks
from pytorch_cuda.matrix import Matrix
from pytorch_cuda.plan import BuildPlan, make_plan
from pytorch_cuda.probes.ca_bundle import find_ca_bundle
from pytorch_cuda.probes.index_probe import probe_index
from pytorch_cuda.registry import parse_registry
from pytorch_cuda.render import find_stale, render_variant
from pytorch_cuda.variants import Variant, select_variant


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


def plan_lineage(matrix: Matrix, request: BuildRequest, root: Path) -> list[BuildPlan]:
    """The requested variant's plan, preceded by its parents' (a child is built FROM its parent)."""
    variants = lineage(matrix, select_variant(matrix, request.target, request.flavour))
    ca = find_ca_bundle(request.ca_bundle)
    ca_path = ca.path if ca else None
    facts = build_facts(root)
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
