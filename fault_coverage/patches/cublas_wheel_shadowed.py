"""Fault: the cuBLAS torch loads is not the one of the nvidia cuBLAS wheel installed (a same-major CUDA toolkit's
copy shadows it, or the wheel was upgraded under torch). Injected from the other side: at interpreter start it writes
the metadata of an nvidia-cublas distribution of another minor (13.99 / 12.99) beside itself, in a folder first on
PYTHONPATH, so the installed wheel reads as another release than the library loaded."""

from pathlib import Path

_here = Path(__file__).resolve().parent
for _name, _version in (("nvidia-cublas", "13.99.0"), ("nvidia-cublas-cu13", "13.99.0"),
                        ("nvidia-cublas-cu12", "12.99.0")):  # fmt: skip
    _info = _here / f"{_name.replace('-', '_')}-{_version}.dist-info"
    try:
        _info.mkdir(exist_ok=True)
        (_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {_name}\nVersion: {_version}\n")
    except OSError:  # a read-only folder (another uid): the metadata written by an earlier start is still there
        pass
