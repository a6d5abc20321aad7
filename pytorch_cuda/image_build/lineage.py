"""Build a flavour and its ancestors in order: a child is built FROM its parent's fresh, checked image."""

from __future__ import annotations

from pytorch_cuda.engine.protocol import Engine
from pytorch_cuda.image_build.build_plan import BuildPlan
from pytorch_cuda.image_build.pipeline import BuildOutcome, PipelineHooks, execute

PARENT_BUILD_ARG = "PARENT_IMAGE"


def execute_lineage(plans: list[BuildPlan], engine: Engine, hooks: PipelineHooks) -> list[BuildOutcome]:
    """Execute plans root first. Each child's PARENT_IMAGE is the image its parent's build just
    produced and checked (by its immutable tag, which now points at it); a failed parent stops
    the chain before any child builds, so no child tag moves either."""
    outcomes: list[BuildOutcome] = []
    for plan in plans:
        build_args = {}
        if outcomes:
            parent = outcomes[-1]
            hooks.log(f"{plan.variant.key} builds FROM {parent.plan.tags.full_ref} ({parent.image_id[:19]})")
            build_args[PARENT_BUILD_ARG] = parent.plan.tags.full_ref
        outcomes.append(execute(plan, engine, hooks, build_args=build_args))
    return outcomes
