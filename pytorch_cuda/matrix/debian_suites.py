"""The Debian suites a base is made from and kept current by: its suite, <suite>-updates and <suite>-security.

mmdebstrap adds the last two by itself only when given no mirror; matrix.yaml names one, so the bootstrap passes
them as `deb` lines (steps/base_image.py), and `build.py bump` reads the same three Packages indexes.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytorch_cuda.matrix.bases import Bootstrap


@dataclass(frozen=True)
class Suite:
    mirror: str  # the archive's root URL, without a trailing slash
    name: str  # trixie, trixie-updates, trixie-security
    security: bool


def security_mirror(mirror: str) -> str:
    """Debian's security archive beside `mirror`: .../debian -> .../debian-security (deb.debian.org serves both)."""
    return mirror.rstrip("/") + "-security"


def base_suites(bootstrap: Bootstrap) -> list[Suite]:
    mirror = str(bootstrap.mirror).rstrip("/")
    name = bootstrap.suite
    return [
        Suite(mirror, name, security=False),
        Suite(mirror, f"{name}-updates", security=False),
        Suite(security_mirror(mirror), f"{name}-security", security=True),
    ]


def deb_lines(bootstrap: Bootstrap) -> list[str]:
    """The sources.list lines of the updates and security suites (mmdebstrap MIRROR arguments)."""
    components = " ".join(bootstrap.components)
    return [f"deb {suite.mirror} {suite.name} {components}" for suite in base_suites(bootstrap)[1:]]
