"""The release-age gate of bump and of the locks (matrix.yaml `policy: min_release_age: DAYS`): a file uploaded less
than DAYS ago is not a candidate yet, as Renovate's minimumReleaseAge and Dependabot's cooldown do: a
compromised or broken release is usually yanked within days. The upload time comes from PEP 691 JSON
(PEP 700 `upload-time`, which PyPI serves); a file without one (a PEP 503 HTML page) is not held back."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

from pytorch_cuda.errors import UserError
from pytorch_cuda.package_index.simple_index import FileSource, IndexFile


def uploaded(file: IndexFile) -> datetime | None:
    if not file.upload_time:
        return None
    return datetime.fromisoformat(file.upload_time.replace("Z", "+00:00"))


def gate(files: Iterable[IndexFile], min_days: int, now: datetime) -> tuple[list[IndexFile], tuple[str, ...]]:
    """(the files old enough, the versions of the files that are not)."""
    if min_days <= 0:
        return list(files), ()
    cutoff = now - timedelta(days=min_days)
    kept: list[IndexFile] = []
    young: set[str] = set()
    for file in files:
        when = uploaded(file)
        if when is None or when <= cutoff:
            kept.append(file)
            continue
        try:
            young.add(str(parse_wheel_filename(file.filename)[1]))
        except InvalidWheelFilename:
            continue  # an sdist: never a candidate anyway
    return kept, tuple(sorted(young))


def gated_source(
    files: FileSource, min_days: int, now: datetime
) -> tuple[FileSource, dict[tuple[str, str], tuple[str, ...]]]:
    """`files` with the gate applied, and what it held back per (index, project), filled as pages are read."""
    young: dict[tuple[str, str], tuple[str, ...]] = {}

    def source(index: str, name: str) -> list[IndexFile]:
        kept, young[index, name] = gate(files(index, name), min_days, now)
        return kept

    return source, young


def newer_than(versions: Iterable[str], current: str) -> tuple[str, ...]:
    return tuple(v for v in versions if Version(v) > Version(current))


def lock_cutoff(min_days: int, now: datetime, files: FileSource, probe: str = "torch") -> Callable[[str], str | None]:
    """The release-age gate for the locks' transitive pins: for an index, the time (uv's --exclude-newer) no
    locked file may be uploaded after, `min_days` before `now`. Only where the index serves PEP 700 upload times
    (PyPI's JSON; probed once per index on `probe`'s page): uv drops every file that has none, so on an index
    without them (download.pytorch.org's HTML pages) nothing could be locked; there, as in bump, no gate."""
    if min_days <= 0:
        return lambda index: None
    cutoff = (now - timedelta(days=min_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    dated: dict[str, bool] = {}

    def of(index: str) -> str | None:
        if index not in dated:
            try:
                dated[index] = any(file.upload_time for file in files(index, probe))
            except UserError:
                dated[index] = False  # unreachable: the lock's own probe says so, with its fix
        return cutoff if dated[index] else None

    return of
