"""In-memory package indexes for bump's unit tests over the real matrix.yaml: PyPI with a torch patch (2.9.2) and a
new minor (2.10.0) and numpy patches, cu126's index a step behind, and cu130's down (a name that does not resolve),
with the pins torch 2.9.2's wheel sets."""

from __future__ import annotations

from datetime import UTC, datetime

from pytorch_cuda.errors import EngineError
from pytorch_cuda.package_index.simple_index import IndexFile

PYPI, CU126 = "https://pypi.org/simple", "https://download.pytorch.org/whl/cu126"
CU130 = "https://download.pytorch.org/whl/cu130"


def wheel(name: str, version: str, tag: str = "py3-none-any") -> IndexFile:
    filename = f"{name.replace('-', '_')}-{version}-{tag}.whl"
    return IndexFile(filename, f"https://files.example/{filename}", False, None, True)


INDEXES = {
    PYPI: {
        "torch": [wheel("torch", v, "cp313-cp313-manylinux_2_28_x86_64") for v in ("2.9.1", "2.9.2", "2.10.0")],
        "numpy": [wheel("numpy", v) for v in ("2.5.5", "2.5.6", "2.5.7")],
    },
    CU126: {
        "torch": [wheel("torch", "2.9.1+cu126", "cp313-cp313-manylinux_2_28_x86_64")],
        "numpy": [wheel("numpy", v) for v in ("2.5.5", "2.5.6")],
    },
}


def files(index: str, name: str) -> list[IndexFile]:
    return INDEXES[index].get(name, [])


def pins(found: list[IndexFile], version: str, python: str, local: str | None, family: str) -> dict[str, str]:
    assert (version, python, local, family) == ("2.9.2", "3.13", None, "cu12")  # PyPI's torch has no local label
    return {"triton": "3.5.2", "cudnn": "9.10.3.1", "nccl": "2.27.6"}


def cu130_down(index: str, name: str) -> list[IndexFile]:
    if index == CU130:
        raise EngineError(f"cannot read {index}/{name}/ (Name or service not known)", "run it where it answers")
    return files(index, name)


def numpy_wheel(version: str, uploaded: str) -> IndexFile:
    filename = f"numpy-{version}-py3-none-any.whl"
    return IndexFile(filename, f"https://files.example/{filename}", False, None, True, uploaded)


def numpy_held_and_waiting(index: str, name: str) -> list[IndexFile]:
    """cu130_down's indexes, with numpy 3 (held back by `compatible`) and a numpy released an hour ago (waiting for
    its age) added to each numpy listing: what the dependency dashboard shows in every state."""
    found = list(cu130_down(index, name))  # a copy: the shared in-memory index stays as it is
    if name == "numpy":
        found += [numpy_wheel("3.0.0", "2025-01-01T00:00:00Z"), numpy_wheel("2.5.9", datetime.now(UTC).isoformat())]
    return found
