"""The Python pins against the advisory databases: pip-audit (PyPI's per-version JSON or OSV), and, for a pin
pip-audit could not look up, PyPI's project JSON, whose `vulnerabilities` are those of the project's newest
release (so they answer for a pin that is that release, and for no other)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from pytorch_cuda.audit.lock_pins import LockedPin
from pytorch_cuda.errors import EngineError
from pytorch_cuda.tls import https_session

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


def _parts(pins: Iterable[LockedPin]) -> list[list[tuple[str, str]]]:
    """The distinct (name, public version) pairs in up to PARALLEL parts of at least CHUNK pins (more only where a
    package is pinned at more versions than that), no part naming a package twice (pip-audit reads one file per
    run): every part runs at once, with no second round of a few pins after the others."""
    pairs = sorted({(p.name, p.public) for p in pins})
    most = max((sum(n == name for n, _ in pairs) for name, _ in pairs), default=0)
    parts: list[dict[str, str]] = [{} for _ in range(max(min(PARALLEL, -(-len(pairs) // CHUNK)), most))]
    for name, version in pairs:
        min((part for part in parts if name not in part), key=len)[name] = version
    return [sorted(part.items()) for part in parts if part]


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
    """A JSON API read over HTTPS (with `ca`), on connections kept open for the next read: None for a 404, one
    EngineError paragraph where it does not answer."""
    session = https_session(ca, FETCHES)

    def fetch_json(url: str) -> Any:
        try:
            response = session.get(url, headers={"Accept": "application/json"}, timeout=_TIMEOUT_S)
        except requests.RequestException as exc:
            raise EngineError(cause=f"cannot read {url} ({exc})", fix=_UNREACHABLE) from exc
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise EngineError(cause=f"cannot read {url} (HTTP {response.status_code})", fix=_UNREACHABLE)
        return response.json()

    return fetch_json


_TIMEOUT_S = 60
_UNREACHABLE = (
    "run audit where PyPI's JSON API (or --pypi-json) answers, or pass --ca-bundle PATH if your network needs one"
)


def audit_pins(
    pins: Iterable[LockedPin], service: Service, run: Run, fetch: FetchJson, log: Callable[[str], None]
) -> PythonAudit:
    advisories: list[Advisory] = []
    skipped: list[tuple[str, str, str]] = []
    audited = 0
    chunks = _parts(pins)
    log(f"pip-audit -s {service.name}: {sum(map(len, chunks))} pinned versions, {len(chunks)} runs side by side")
    unanswered: list[tuple[str, str, str]] = []  # (name, version, pip-audit's skip reason)
    fallbacks: list[Future[list[Advisory] | str | None]] = []
    # pip-audit asks the service one package at a time: its processes run side by side, each on a part; a pin it
    # could not look up gets its project JSON read (the fallback) as soon as its part is done, beside the others
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool, ThreadPoolExecutor(max_workers=FETCHES) as reads:
        running = {pool.submit(_pip_audit, chunk, service, run): chunk for chunk in chunks}
        for done in as_completed(running):
            pairs = dict(running[done])
            for dependency in done.result():
                name = str(dependency["name"])
                version = str(dependency.get("version", pairs.get(name, "")))
                if "skip_reason" in dependency:
                    pin = (name, pairs.get(name, version))
                    unanswered.append((*pin, str(dependency["skip_reason"])))
                    fallbacks.append(
                        reads.submit(_from_project_json, *pin, service, fetch) if service.name == "pypi" else _none()
                    )
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
        for (name, version, reason), answer in zip(unanswered, fallbacks, strict=True):
            fallback = answer.result()
            if isinstance(fallback, list):
                audited += 1
                advisories += fallback
            else:
                skipped.append((name, version, fallback or reason))
    return PythonAudit(tuple(advisories), tuple(sorted(skipped)), audited)


def _none() -> Future[list[Advisory] | str | None]:
    """No fallback (the OSV service: PyPI's project JSON is not the database asked for): pip-audit's reason stays."""
    found: Future[list[Advisory] | str | None] = Future()
    found.set_result(None)
    return found
