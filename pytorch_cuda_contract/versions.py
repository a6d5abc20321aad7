"""Version parsing and the encodings torch uses for cuDNN, NCCL and drivers."""

from __future__ import annotations

import re

_NUMERIC_PREFIX = re.compile(r"^\d+(?:\.\d+)*")


def version_tuple(text: str) -> tuple[int, ...]:
    """``"9.10.2.21"`` -> ``(9, 10, 2, 21)``; ``"580.159.03"`` -> ``(580, 159, 3)``.

    Only the leading dotted-number part counts (``"2.9.1+cu128"`` -> ``(2, 9, 1)``).
    """
    match = _NUMERIC_PREFIX.match(text.strip())
    if match is None:
        raise ValueError(f"not a dotted version: {text!r}")
    return tuple(int(part) for part in match.group(0).split("."))


def release_prefix(text: str, parts: int) -> str:
    """The first ``parts`` numbers of a version: ``("9.10.2.21", 3)`` -> ``"9.10.2"``."""
    return ".".join(str(n) for n in version_tuple(text)[:parts])


def cudnn_version_int(version: str) -> int:
    """The integer ``torch.backends.cudnn.version()`` reports for a cuDNN version.

    cuDNN >= 9 encodes major*10000 + minor*100 + patch (9.10.2 -> 91002);
    cuDNN 8 and older encode major*1000 + minor*100 + patch (8.9.2 -> 8902).
    """
    numbers = (*version_tuple(version), 0, 0)
    major, minor, patch = numbers[0], numbers[1], numbers[2]
    scale = 10000 if major >= 9 else 1000
    return major * scale + minor * 100 + patch


def cudnn_version_string(encoded: int) -> str:
    """Inverse of :func:`cudnn_version_int`: 91002 -> ``"9.10.2"``, 8902 -> ``"8.9.2"``."""
    return _dotted(encoded, wide_from=90000)


def _dotted(encoded: int, wide_from: int) -> str:
    """major*10000 + minor*100 + patch from ``wide_from`` on, major*1000 + minor*100 + patch below it."""
    major, rest = divmod(encoded, 10000 if encoded >= wide_from else 1000)
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


def nccl_version_string(reported: tuple[int, ...] | int) -> str:
    """Dotted form of ``torch.cuda.nccl.version()``.

    Current torch returns a tuple ``(2, 27, 5)`` (sometimes with a suffix
    element); old torch returned NCCL_VERSION_CODE, an int encoded as
    major*10000 + minor*100 + patch since NCCL 2.9 (major*1000 + ... before).
    """
    if isinstance(reported, int):
        return _dotted(reported, wide_from=20900)
    numbers = [int(part) for part in reported[:3]]
    return ".".join(str(n) for n in numbers)


def is_at_least(version: str, minimum: str) -> bool:
    """Numeric comparison of dotted versions (``"580.159.03" >= "570.26"``)."""
    return version_tuple(version) >= version_tuple(minimum)
