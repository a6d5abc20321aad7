"""The base's digest pin: a registry base follows its tag within the policy (or is held), its `@sha256:` and the
pin's comment move with it; a bootstrapped base (no pin) is one line, never a pretend move."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.bump.base_digest import plan_bases
from pytorch_cuda.bump.bump_plan import BumpPlan
from pytorch_cuda.bump.bump_policy import BumpPolicyError, parse_policy
from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix

ROOT = Path(__file__).resolve().parents[3]
OLD, NEW, MANIFEST = "sha256:" + "1" * 64, "sha256:" + "2" * 64, "sha256:" + "3" * 64
UPSTREAM = "registry.example/debian:trixie-slim"


def _pinned(upstream: str = UPSTREAM) -> Matrix:
    matrix = load_matrix(ROOT / "matrix.yaml")
    base = matrix.bases["trixie"].model_copy(update={"digest": OLD, "upstream": upstream})
    return matrix.model_copy(update={"bases": {"trixie": base}})


def _registry(tag: str) -> tuple[str, str]:
    assert tag == UPSTREAM
    return MANIFEST, NEW


def test_a_bootstrapped_base_says_so_in_one_line() -> None:
    matrix = load_matrix(ROOT / "matrix.yaml")
    moves, notes = plan_bases(matrix, parse_policy(matrix.policy), _registry)
    assert moves == []
    assert len(notes) == 1
    assert "no `digest:` pin in matrix.yaml" in notes[0]
    assert "mmdebstrap" in notes[0]


def test_a_registry_base_follows_its_tag_and_is_rewritten_with_a_why() -> None:
    moves, notes = plan_bases(_pinned(), parse_policy(None), _registry)
    assert notes == []
    [move] = moves
    assert (move.old, move.new, move.moved) == (OLD, NEW, True)
    assert move.why == f"policy base: follow ({UPSTREAM} serves it now)"
    text = "bases:\n  trixie:\n    image: x/debian:trixie\n    # pinned by build.py release pin-base: pulled\n"
    text += f"    digest: {OLD}\n    upstream: {UPSTREAM}\n"
    rewritten = BumpPlan((), bases=(move,)).rewrite(text)
    assert f"digest: {NEW}" in rewritten
    assert f"# pinned by build.py bump: what {UPSTREAM} served" in rewritten
    assert "pin-base" not in rewritten


def test_an_upstream_pinned_by_manifest_digest_moves_with_the_image() -> None:
    [move] = plan_bases(_pinned(f"{UPSTREAM}@{OLD}"), parse_policy(None), _registry)[0]
    assert move.new_upstream == f"{UPSTREAM}@{MANIFEST}"
    text = f"bases:\n  trixie:\n    image: x/debian:trixie\n    upstream: {UPSTREAM}@{OLD}\n    digest: {OLD}\n"
    assert f"upstream: {UPSTREAM}@{MANIFEST}\n" in BumpPlan((), bases=(move,)).rewrite(text)


def test_policy_pinned_holds_the_base_and_a_bad_rule_is_refused() -> None:
    [move] = plan_bases(_pinned(), parse_policy({"base": "pinned"}), _registry)[0]
    assert (move.held_back, move.moved) == (True, False)
    assert not BumpPlan((), bases=(move,)).rebuild_needed
    with pytest.raises(BumpPolicyError, match="base is 'latest'"):
        parse_policy({"base": "latest"})


def test_a_registry_error_names_the_base() -> None:
    def unreachable(tag: str) -> tuple[str, str]:
        raise UserError(cause="the registry did not answer", fix="check it")

    with pytest.raises(UserError, match="base trixie: the registry did not answer"):
        plan_bases(_pinned(), parse_policy(None), unreachable)
