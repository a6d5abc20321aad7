"""A bump plan written into a checkout (bump/apply_plan.py), with the index and uv faked at the locks room's door
(refresh_locks): matrix.yaml rewritten, images/ re-rendered, only the checked targets' root locks re-resolved (their
child flavours after them, inside refresh_locks), with uv told to --refresh; and all or nothing: a lock that fails
puts matrix.yaml and images/ back as they were, a file it added included, and says so.
tests/pytorch_cuda/bump/test_bump_loopback.py runs the same with real uv on a loopback index."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.bump import apply_plan, preview_plan
from pytorch_cuda.bump.bump_plan import BumpPlan, Move
from pytorch_cuda.bump.resolver import Resolution
from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.writing import LockChange, Resolver
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.variants import Variant
from tests.support.bump_checkout import checkout

NUMPY = Move(("python_packages", "numpy"), Resolution("numpy", "2.5.5", "2.5.6", "policy", None, ()))
Relocked = list[tuple[list[str], Resolver]]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(apply_plan, "matrix_lock_cutoff", lambda matrix, ca, ignore: lambda index: None)
    return checkout(tmp_path / "repo", "http://127.0.0.1:9/simple", "http://127.0.0.1:9/debian")


def _fake_locks(monkeypatch: pytest.MonkeyPatch, root: Path, error: UserError | None = None) -> Relocked:
    """refresh_locks faked: it records what it was asked, changes a lock and adds a file, then fails with `error`."""
    asked: Relocked = []

    def refresh(
        matrix: Matrix, roots: list[Variant], where: Path, resolver: Resolver
    ) -> tuple[list[LockChange], list[UserError]]:
        asked.append(([v.key for v in roots], resolver))
        lock = where / "images/cu128-runtime/requirements.lock"
        lock.write_text(lock.read_text().replace("numpy==2.5.5", "numpy==2.5.6"))
        (where / "images/cu128-runtime/stray.lock").write_text("half-written\n")
        changes = [LockChange(lock, ("numpy 2.5.5 -> 2.5.6",), created=False)]
        return (changes, []) if error is None else (changes, [error])

    monkeypatch.setattr(apply_plan, "refresh_locks", refresh)
    return asked


def _tree(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in [root / "matrix.yaml", *(root / "images").rglob("*")] if p.is_file()}


def test_the_plan_is_written_rendered_and_the_checked_roots_relocked(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _fake_locks(monkeypatch, repo)
    matrix = load_matrix(repo / "matrix.yaml")
    changes = apply_plan.apply_plan(BumpPlan((NUMPY,)), matrix, repo / "matrix.yaml", repo, ["cu128"], None)
    assert [c.changes for c in changes] == [("numpy 2.5.5 -> 2.5.6",)]
    assert load_matrix(repo / "matrix.yaml").python_packages["numpy"] == "2.5.6"
    assert "numpy==2.5.6" in (repo / "images/cu128-runtime/requirements.txt").read_text()  # re-rendered
    ((roots, resolver),) = asked
    assert roots == ["cu128-runtime"]  # the root; its jupyter child is re-locked after it, by refresh_locks
    assert resolver.run is apply_plan.refreshing_uv


def test_nothing_is_relocked_for_a_target_left_out_or_a_plan_without_a_pin_move(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _fake_locks(monkeypatch, repo)
    matrix = load_matrix(repo / "matrix.yaml")
    apply_plan.apply_plan(BumpPlan((NUMPY,)), matrix, repo / "matrix.yaml", repo, [], None)  # cu128 unreachable
    apply_plan.apply_plan(BumpPlan(()), matrix, repo / "matrix.yaml", repo, ["cu128"], None)
    assert asked == []


def test_a_lock_that_fails_puts_matrix_yaml_and_images_back(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_locks(monkeypatch, repo, UserError(cause="uv could not resolve numpy==2.5.6", fix="publish it"))
    before = _tree(repo)
    matrix = load_matrix(repo / "matrix.yaml")
    with pytest.raises(UserError) as raised:
        apply_plan.apply_plan(BumpPlan((NUMPY,)), matrix, repo / "matrix.yaml", repo, ["cu128"], None)
    assert raised.value.cause == (
        "uv could not resolve numpy==2.5.6; matrix.yaml and images/ are put back as they were"
    )
    assert raised.value.fix == "publish it"
    assert _tree(repo) == before  # the changed lock restored, the added file gone


def test_a_release_age_gate_that_cannot_be_read_changes_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unreadable(matrix: Matrix, ca: Path | None, ignore: bool) -> None:
        raise UserError(cause="matrix.yaml's policy is bad", fix="fix it")

    monkeypatch.setattr(apply_plan, "matrix_lock_cutoff", unreadable)
    before = _tree(repo)
    with pytest.raises(UserError) as raised:
        apply_plan.apply_plan(
            BumpPlan((NUMPY,)), load_matrix(repo / "matrix.yaml"), repo / "matrix.yaml", repo, ["cu128"], None
        )
    assert raised.value.cause == "matrix.yaml's policy is bad; matrix.yaml and images/ are put back as they were"
    assert _tree(repo) == before


def test_a_dry_run_previews_the_same_relock_and_writes_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _fake_locks(monkeypatch, repo)
    before = _tree(repo)
    matrix = load_matrix(repo / "matrix.yaml")
    preview = preview_plan.preview_plan(BumpPlan((NUMPY,)), matrix, repo / "matrix.yaml", repo, ["cu128"], None)
    assert _tree(repo) == before  # the checkout: not a byte written
    ((roots, resolver),) = asked
    assert roots == ["cu128-runtime"]
    assert resolver.run is apply_plan.refreshing_uv  # the same resolution the real bump runs
    assert [c.changes for c in preview.changes] == [("numpy 2.5.5 -> 2.5.6",)]
    lock = "images/cu128-runtime/requirements.lock"
    assert f"--- a/{lock}\n+++ b/{lock}\n" in preview.diff
    assert "\n-numpy==2.5.5" in preview.diff
    assert "\n+numpy==2.5.6" in preview.diff
    assert "+++ b/images/cu128-runtime/layer-3-python.lock" in preview.diff  # the layer slices, re-rendered


def test_a_dry_run_whose_lock_fails_says_nothing_was_written(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_locks(monkeypatch, repo, UserError(cause="uv could not resolve numpy==2.5.6", fix="publish it"))
    before = _tree(repo)
    matrix = load_matrix(repo / "matrix.yaml")
    with pytest.raises(UserError, match=r"untouched \(a dry run writes nothing\)"):
        preview_plan.preview_plan(BumpPlan((NUMPY,)), matrix, repo / "matrix.yaml", repo, ["cu128"], None)
    assert _tree(repo) == before
