"""Push a checked, tagged image to a registry: the immutable full tag first, the moving aliases last, all or none.

Before anything is pushed, the registry is asked what each tag points at now. The full tag goes
first (it carries the layers); only when it is there do the aliases move, one by one. When an
alias push fails (after the retries), the aliases that moved are put back where the registry had
them (by pulling the previous digest and pushing it again under the alias), and the error names
every tag: moved, put back, not moved, each with its digest. A tag that did not exist before cannot
be dropped again without deleting the manifest under the full tag too, so it is reported as moved.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pytorch_cuda.engine.protocol import Engine, PushResult, RegistryError
from pytorch_cuda.errors import EngineError
from pytorch_cuda.matrix.tags import TagSet
from pytorch_cuda.references import parse_reference
from pytorch_cuda.retry import Backoff, GaveUpError, Sleeper, with_retries
from pytorch_cuda.steps.move_tags import TagMove, move_tags, roll_back
from pytorch_cuda.steps.remote_names import remote_tags

Log = Callable[[str], None]
RETRY_FIX = (
    "once the registry answers again, run the same push command again: nothing is rebuilt, layers the registry "
    "has are not sent again, and the tags move then"
)


@dataclass(frozen=True)
class Pushed:
    ref: str
    digest: str
    previous: str | None  # what the registry served under ref before; None when the tag is new
    attempts: int
    seconds: float
    uploaded: int  # layers sent ("Pushed")
    existing: int  # layers the registry had ("Layer already exists")
    mounted: int  # layers mounted from another repository of the registry


@dataclass(frozen=True)
class PublishOutcome:
    registry: str
    pushed: tuple[Pushed, ...]
    seconds: float

    @property
    def digests(self) -> dict[str, str]:
        return {p.ref: p.digest for p in self.pushed}


class PushError(EngineError):
    """A push failed or was interrupted; ``states`` says, for every remote tag, where it was left."""

    def __init__(self, cause: str, fix: str, states: dict[str, str] | None = None, exit_status: int = 2) -> None:
        super().__init__(cause, fix)
        self.states = states or {}
        self.exit_status = exit_status


@dataclass(frozen=True)
class Publisher:
    engine: Engine
    log: Log
    backoff: Backoff = field(default_factory=Backoff)
    sleep: Sleeper = time.sleep

    def retried_push(self, ref: str) -> tuple[PushResult, int, float]:
        began = time.monotonic()
        done = with_retries(
            lambda: self.engine.push(ref, self.log),
            backoff=self.backoff,
            sleep=self.sleep,
            on_retry=self._retrying(ref),
        )
        return done.value, done.attempts, time.monotonic() - began

    def retried_lookup(self, ref: str) -> str | None:
        return with_retries(
            lambda: self.engine.registry_digest(ref),
            backoff=self.backoff,
            sleep=self.sleep,
            on_retry=self._retrying(ref),
        ).value

    def _retrying(self, ref: str) -> Callable[[int, float, Exception], None]:
        def note(attempt: int, wait: float, error: Exception) -> None:
            self.log(f"{ref}: {error}; try {attempt + 1} of {self.backoff.attempts} in {wait:.0f} s")

        return note


def publish(image_id: str, tags: TagSet, registry: str, publisher: Publisher) -> PublishOutcome:
    started = time.monotonic()
    engine, log = publisher.engine, publisher.log
    remote = remote_tags(tags, registry)
    local = move_tags(engine, image_id, remote.all_refs)  # the local names the engine pushes (all or none)
    try:
        previous = {ref: publisher.retried_lookup(ref) for ref in remote.all_refs}
    except KeyboardInterrupt:
        roll_back(engine, local)
        raise PushError(
            cause=f"interrupted before anything was pushed; the local tags moved, no tag of {registry} did",
            fix=RETRY_FIX,
            states=dict.fromkeys(remote.all_refs, "not moved"),
            exit_status=130,
        ) from None
    except (RegistryError, GaveUpError) as exc:
        roll_back(engine, local)
        host = registry.partition("/")[0]
        raise PushError(
            cause=f"cannot ask the registry {registry} what its tags point at ({exc}); nothing was pushed",
            fix=f"check that it answers (`curl -sI https://{host}/v2/`, or http:// for a local one) "
            f"and, where it needs a login, `docker login {host}`; then run the same push command again",
        ) from exc
    pushed: list[Pushed] = []
    try:
        for ref in remote.all_refs:
            pushed.append(_push_one(publisher, ref, previous[ref]))
    except (RegistryError, GaveUpError) as exc:
        raise _failed(publisher, remote, pushed=pushed, previous=previous, local=local, reason=str(exc)) from exc
    except KeyboardInterrupt:
        raise _interrupted(remote, pushed, previous) from None
    log(f"pushed {len(pushed)} tags to {registry} in {time.monotonic() - started:.0f} s")
    return PublishOutcome(registry, tuple(pushed), time.monotonic() - started)


def _push_one(publisher: Publisher, ref: str, previous: str | None) -> Pushed:
    publisher.log(f"pushing {ref}" + (f" (the registry has {previous})" if previous else " (new tag)"))
    result, attempts, seconds = publisher.retried_push(ref)
    done = Pushed(
        ref,
        result.digest,
        previous,
        attempts,
        round(seconds, 1),
        result.count("Pushed"),
        result.count("Layer already exists"),
        result.count("Mounted from"),
    )
    publisher.log(
        f"pushed {ref} {done.digest}: {done.uploaded} layers uploaded, {done.existing} already there"
        + (f", {done.mounted} mounted" if done.mounted else "")
        + f", {seconds:.1f} s"
    )
    return done


def _failed(
    publisher: Publisher,
    remote: TagSet,
    *,
    pushed: list[Pushed],
    previous: dict[str, str | None],
    local: list[TagMove],
    reason: str,
) -> PushError:
    failed = remote.all_refs[len(pushed)]
    unpushed = remote.all_refs[len(pushed) :]
    roll_back(publisher.engine, [m for m in local if m.ref in unpushed])
    if not pushed:  # the full tag itself: no tag moved in the registry
        return PushError(
            cause=f"pushing {failed} failed ({reason}); no tag moved in the registry {remote.repository}",
            fix=RETRY_FIX,
            states=dict.fromkeys(unpushed, "not moved"),
        )
    put_back = {alias.ref: _put_back(publisher, alias) for alias in reversed(pushed[1:])}  # last moved first
    states = {pushed[0].ref: f"pushed {pushed[0].digest}"}
    states.update({alias.ref: put_back[alias.ref] for alias in pushed[1:]})
    states.update({ref: f"not moved (still {previous[ref] or 'absent'})" for ref in unpushed})
    listed = "; ".join(f"{ref}: {state}" for ref, state in states.items())
    return PushError(
        cause=f"pushing {failed} failed ({reason}), after the full tag and {len(pushed) - 1} aliases were pushed; "
        f"the aliases that moved were put back where the registry allowed. Every tag now: {listed}",
        fix=RETRY_FIX,
        states=states,
    )


def _put_back(publisher: Publisher, alias: Pushed) -> str:
    """Move one alias back to its previous digest: pull that digest, tag it, push it again."""
    if alias.previous is None:
        return f"moved to {alias.digest} (a new tag; it cannot be dropped without deleting the full tag's manifest)"
    if alias.previous == alias.digest:
        return f"unchanged ({alias.digest})"
    engine = publisher.engine
    pinned = f"{parse_reference(alias.ref).repository}@{alias.previous}"
    reason = engine.pull(pinned)
    old_id = None if reason else engine.image_id(pinned)
    if old_id is None:
        return f"moved to {alias.digest}, NOT put back to {alias.previous} (pulling it failed: {reason or 'not found'})"
    engine.tag(old_id, alias.ref)
    try:
        result, _, _ = publisher.retried_push(alias.ref)
    except (RegistryError, GaveUpError) as exc:
        return f"moved to {alias.digest}, NOT put back to {alias.previous} ({exc})"
    if result.digest != alias.previous:
        return f"put back to the previous image, now served as {result.digest} (it was {alias.previous})"
    return f"put back to {alias.previous}"


def _interrupted(remote: TagSet, pushed: list[Pushed], previous: dict[str, str | None]) -> PushError:
    states = {p.ref: f"moved to {p.digest}" for p in pushed}
    states.update({ref: f"not moved (still {previous[ref] or 'absent'})" for ref in remote.all_refs[len(pushed) :]})
    return PushError(
        cause="interrupted while pushing; every tag now: " + "; ".join(f"{r}: {s}" for r, s in states.items()),
        fix=RETRY_FIX,
        states=states,
        exit_status=130,
    )
