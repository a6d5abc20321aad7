"""A move's group (patch, minor, major) by the version parts it changes."""

from __future__ import annotations

import pytest

from pytorch_cuda.bump.groups import update_type


@pytest.mark.parametrize(
    ("old", "new", "group"),
    [
        ("2.9.1", "2.9.2", "patch"),
        ("9.10.2.21", "9.10.3.1", "patch"),
        ("2.5.5", "2.6.0", "minor"),
        ("0.11.0", "0.12.0", "minor"),
        ("2.5.5", "3.0.0", "major"),
        ("2026.9.0", "2027.1.0", "major"),
        ("1", "1.1", "minor"),
    ],
)
def test_update_type(old: str, new: str, group: str) -> None:
    assert update_type(old, new) == group
