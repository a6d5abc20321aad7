"""Fault: an installed package whose requirement is missing (a dependency uninstalled, or a package installed
with --no-deps), which `pip check` reports. Installed as sitecustomize: at interpreter start it writes the
package's metadata (requiring a package that does not exist) beside itself, in a folder on PYTHONPATH."""

from pathlib import Path

_info = Path(__file__).resolve().parent / "conformance_fault_probe-1.0.dist-info"
try:
    _info.mkdir(exist_ok=True)
    (_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: conformance-fault-probe\nVersion: 1.0\n"
        "Requires-Dist: conformance-missing-dependency>=1.0\n"
    )
except OSError:  # a read-only folder (another uid): the metadata written by an earlier start is still there
    pass
