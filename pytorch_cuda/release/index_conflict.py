"""Two releases racing on one tag: a writer of the release index that finds one of its tags bound, in a newer index,
to a digest that is neither its own nor the one bound when it first read the index, lost the race to another
release of that tag (inside release.yml's concurrency group or outside it). Re-applying its binding would silently
undo the other release, so it is refused instead: the later writer wins whole, the loser binds nothing and its
`promote` moves nothing (signing.py's write_signature_index calls this before every try)."""

from __future__ import annotations

from collections.abc import Sequence

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.release.release_index import Binding


class IndexConflictError(UserError):
    """Another writer bound one of this step's tags to another digest while this step was binding it (two releases
    racing on one tag). Exit status 1: the other writer's binding stands, none of this step's tags is bound."""

    exit_status = EXIT_CHECKS_FAILED


def check_no_rival(ref: str, bindings: Sequence[Binding], base: dict[str, str], now: dict[str, str]) -> None:
    """Refused when the newer index binds a tag of ours to a digest that is neither ours nor the one the index
    bound when this step first read it: another writer moved that tag meanwhile, and re-applying ours would
    silently undo its release (the later writer wins; this one is told it lost)."""
    for binding in bindings:
        found = now.get(binding.tag)
        if found not in (base.get(binding.tag), binding.digest):
            tags = ", ".join(b.tag for b in bindings)
            raise IndexConflictError(
                cause=f"another writer bound {binding.tag} to {found} in {ref} while this step was binding it to "
                f"{binding.digest} (two releases racing on one tag): this step is refused, the other binding "
                f"stands, and none of this step's tags ({tags}) is bound, so none may be promoted",
                fix="find who else released this tag (docs/release.md, 'Index updates'); if this release must win, "
                "run the step again: it then moves the tag on purpose",
            )
