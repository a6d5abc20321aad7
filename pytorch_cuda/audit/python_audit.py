"""The Python pins against the advisory databases: pip-audit (PyPI's per-version JSON or OSV), and, for a pin
pip-audit could not look up, PyPI's project JSON, whose `vulnerabilities` are those of the project's newest
release (so they answer for a pin that is that release, and for no other)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytorch_cuda.audit.lock_pins import LockedPin
from pytorch_cuda.errors import EngineError
from pytorch_cuda.package_index.simple_index import fetch_bytes

PYPI_JSON = "https://pypi.org/pypi"
PARALLEL, CHUNK = 6, 24  # pip-audit processes at once (network-bound), and the fewest pins one is given
FETCHES = 16  # HTTP reads at once (threads waiting on the network: the project JSON fallback, Debian's .deb files)
Run = Callable[[list[str]], "subprocess.CompletedProcess[str]"]
FetchJson = Callable[[str], Any]  # URL -> the decoded JSON, or None for a 404


@dataclass(frozen=True)
class Advisory:
    """One published advisory for one package version (its ids: the first, then its aliases)."""

    name: str
    version: str
    ids: tuple[str, ...]
    fix_versions: tuple[str, ...]
    description: str
    source: str  # which database answered: "pip-audit (pypi)", "pip-audit (osv)", "PyPI project JSON"


@dataclass(frozen=True)
class PythonAudit:
    advisories: tuple[Advisory, ...]
    not_audited: tuple[tuple[str, str, str], ...]  # (name, version, why)
    audited: int  # distinct (name, version) pairs some database answered for


@dataclass(frozen=True)
class Service:
    name: str = "pypi"  # pip-audit's --vulnerability-service: pypi or osv
    osv_url: str | None = None
    pypi_json: str = PYPI_JSON  # PyPI's JSON API, for the newest-release fallback


def _rounds(pins: Iterable[LockedPin]) -> list[list[tuple[str, str]]]:
    """The distinct (name, public version) pairs, split so that no file names a package twice."""
    rounds: list[dict[str, str]] = []
    for name, version in sorted({(p.name, p.public) for p in pins}):
        slot = next((r for r in rounds if name not in r), None)
        if slot is None:
            slot = {}
            rounds.append(slot)
        slot[name] = version
    return [sorted(r.items()) for r in rounds]


def _split(pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """A round in up to PARALLEL parts of at least CHUNK pins (a small round stays one run)."""
    size = max(CHUNK, -(-len(pairs) // PARALLEL))
    return [pairs[start : start + size] for start in range(0, len(pairs), size)]


def run_pip_audit(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip_audit", *argv], capture_output=True, text=True, check=False)


def _pip_audit(pairs: Sequence[tuple[str, str]], service: Service, run: Run) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="pytorch-cuda-audit-") as folder:
        requirements = Path(folder) / "pins.txt"
        requirements.write_text("".join(f"{n}=={v}\n" for n, v in pairs), encoding="utf-8")
        argv = ["-r", str(requirements), "--no-deps", "--disable-pip", "-f", "json", "--progress-spinner", "off"]
        argv += ["-s", service.name, *(["--osv-url", service.osv_url] if service.osv_url else [])]
        done = run(argv)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise EngineError(
            cause=f"pip-audit exited with {done.returncode} and printed no JSON report: "
            f"{(done.stderr or done.stdout).strip()[-600:]}",
            fix="run audit where the vulnerability service answers (--service pypi: pypi.org's JSON API; --service "
            "osv: api.osv.dev, or the OSV-compatible service --osv-url names); pip-audit takes a CA bundle from "
            "$REQUESTS_CA_BUNDLE",
        ) from None
    dependencies: list[dict[str, Any]] = report.get("dependencies", [])
    return dependencies


def _merge(entries: list[tuple[list[str], list[str], str]]) -> list[tuple[tuple[str, ...], tuple[str, ...], str]]:
    """Entries that share an id or alias are one advisory (PyPI lists a PYSEC and a GHSA record for one CVE)."""
    merged: list[tuple[list[str], set[str], str]] = []
    for ids, fixes, text in entries:
        same = next((m for m in merged if set(m[0]) & set(ids)), None)
        if same is None:
            merged.append((list(dict.fromkeys(ids)), set(fixes), text))
        else:
            same[0].extend(i for i in ids if i not in same[0])
            same[1].update(fixes)
    return [(tuple(ids), tuple(sorted(fixes, key=_version_key)), text) for ids, fixes, text in merged]


def _version_key(text: str) -> Any:
    from packaging.version import Version

    return Version(text)


def _from_project_json(name: str, version: str, service: Service, fetch: FetchJson) -> list[Advisory] | str:
    """The advisories of the project's newest release, when that is `version`; else why not."""
    project = fetch(f"{service.pypi_json.rstrip('/')}/{name}/json")
    if project is None:
        return "PyPI has no such project"
    newest = str(project.get("info", {}).get("version", ""))
    if newest != version:
        return (
            f"the advisory service did not answer for this version, and PyPI's project JSON answers for {newest} only"
        )
    entries = [
        (
            [str(v["id"]), *map(str, v.get("aliases") or [])],
            [str(f) for f in v.get("fixed_in") or []],
            str(v.get("summary") or v.get("details") or "N/A").replace("\n", " "),
        )
        for v in project.get("vulnerabilities") or []
        if not v.get("withdrawn")
    ]
    return [Advisory(name, version, ids, fixes, text, "PyPI project JSON") for ids, fixes, text in _merge(entries)]


def pypi_json(ca: Path | None) -> FetchJson:
    """A JSON API read over HTTPS (with `ca`): None for a 404, one EngineError paragraph where it does not answer."""

    def fetch_json(url: str) -> Any:
        try:
            return json.loads(fetch_bytes(url, ca, accept="application/json")[1])
        except EngineError as exc:
            if getattr(exc.__cause__, "code", None) == 404:
                return None
            raise

    return fetch_json


def audit_pins(
    pins: Iterable[LockedPin], service: Service, run: Run, fetch: FetchJson, log: Callable[[str], None]
) -> PythonAudit:
    advisories: list[Advisory] = []
    skipped: list[tuple[str, str, str]] = []
    audited = 0
    chunks: list[list[tuple[str, str]]] = []
    for number, pairs in enumerate(_rounds(pins), start=1):
        log(f"pip-audit -s {service.name}: {len(pairs)} pinned versions (round {number})")
        chunks += _split(pairs)
    # pip-audit asks the service one package at a time: its processes run side by side, each on a part of a round
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        reports = list(pool.map(lambda chunk: _pip_audit(chunk, service, run), chunks))
    unanswered: list[tuple[str, str, str]] = []  # (name, version, pip-audit's skip reason)
    for pairs, report in zip(chunks, reports, strict=True):
        for dependency in report:
            name, version = (
                str(dependency["name"]),
                str(dependency.get("version", dict(pairs).get(dependency["name"], ""))),
            )
            if "skip_reason" in dependency:
                unanswered.append((name, dict(pairs).get(name, version), str(dependency["skip_reason"])))
                continue
            audited += 1
            entries = [
                (
                    [str(v["id"]), *map(str, v.get("aliases") or [])],
                    [str(f) for f in v.get("fix_versions") or []],
                    str(v.get("description") or "N/A"),
                )
                for v in dependency.get("vulns", [])
            ]
            source = f"pip-audit ({service.name})"
            advisories += [Advisory(name, version, i, f, t, source) for i, f, t in _merge(entries)]
    with ThreadPoolExecutor(max_workers=FETCHES) as pool:  # the fallback: one project JSON each, side by side
        fallbacks = list(
            pool.map(
                lambda n: _from_project_json(n[0], n[1], service, fetch) if service.name == "pypi" else None,
                unanswered,
            )
        )
    for (name, version, reason), fallback in zip(unanswered, fallbacks, strict=True):
        if isinstance(fallback, list):
            audited += 1
            advisories += fallback
        else:
            skipped.append((name, version, fallback or reason))
    return PythonAudit(tuple(advisories), tuple(sorted(skipped)), audited)
