"""`run_audit`: the whole `build.py audit` flow (pytorch_cuda/cli/auditing.py parses its flags into an AuditRequest
and prints the outcome): read the locks, look every pin up, check the Debian records, apply the triage, write the
files asked for and, with ``fix``, apply the fixes that exist."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.audit.audit_files import AuditFiles, write_audit_files
from pytorch_cuda.audit.debian_audit import audit_debian
from pytorch_cuda.audit.findings import AuditResult, Finding, apply_triage, python_findings, stale_decisions
from pytorch_cuda.audit.fixing import FixReport, fix_findings
from pytorch_cuda.audit.lock_pins import read_all, unlocked
from pytorch_cuda.audit.python_audit import Service, audit_pins, pypi_json, run_pip_audit
from pytorch_cuda.audit.triage import TRIAGE_FILE, load_triage
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.network.ca_bundle import find_ca_bundle


@dataclass(frozen=True)
class AuditRequest:
    """What `build.py audit` was asked: the checkout, which locks, which advisory service, and what to write."""

    root: Path
    matrix: Path | None  # None: ROOT/matrix.yaml
    locks: tuple[Path, ...] | None  # None: every lock; a relative path is under root
    service: Service
    debian: bool
    triage: Path | None  # None: ROOT/TRIAGE_FILE
    files: AuditFiles
    fix: bool
    ca_bundle: Path | None


@dataclass(frozen=True)
class AuditOutcome:
    result: AuditResult
    fixed: FixReport | None  # with fix, where there were findings


def run_audit(request: AuditRequest, log: Callable[[str], None]) -> AuditOutcome:
    """Audit every lock (or those asked for) and write the files asked for; ``log`` gets the progress lines."""
    root = request.root
    triage = load_triage(request.triage or root / TRIAGE_FILE)  # first: a bad file is refused before the audit
    matrix_path = request.matrix or root / "matrix.yaml"
    ca = find_ca_bundle(request.ca_bundle)
    ca_path = ca.path if ca else None
    locks = [p if p.is_absolute() else root / p for p in request.locks] if request.locks else None
    pins = read_all(root, locks)
    lock_names = tuple(dict.fromkeys(p.lock for p in pins))
    log(f"{len(pins)} pins in {len(lock_names)} locks")
    debian_found: list[Finding] = []
    with ThreadPoolExecutor(max_workers=1) as side:  # the Debian half beside the Python half: both wait on the network
        debian_half = (
            side.submit(audit_debian, load_matrix(matrix_path), root, ca_path, debian_found, log)
            if request.debian
            else None
        )
        python = audit_pins(pins, request.service, run_pip_audit, pypi_json(ca_path), log)
        debian, notes = debian_half.result() if debian_half else (0, [])
    findings = [*python_findings(python, pins), *debian_found]
    open_findings, settled = apply_triage(findings, triage)
    notes += stale_decisions(findings, triage)
    notes += [] if locks else unlocked(load_matrix(matrix_path), root)
    result = AuditResult(
        tuple(open_findings), python.not_audited, lock_names, len(pins), python.audited, debian, tuple(notes),
        tuple(settled),
    )  # fmt: skip
    write_audit_files(result, triage, request.files)
    fixed = None
    if request.fix and result.findings:
        fixed = fix_findings(matrix_path, root, result.findings, ca_path, log)
    return AuditOutcome(result, fixed)
