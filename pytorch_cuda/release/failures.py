"""A failed verification names the field, the value the policy or the signed data expects, and the value found."""

from __future__ import annotations

from dataclasses import dataclass

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError

FIX = (
    "do not use this image: it is not the one that was released and signed. Pull the release by the digest in "
    "its release notes, or ask the publisher whether the tag was moved"
)


@dataclass(frozen=True)
class Reason:
    field: str  # e.g. critical.identity.docker-reference, release-index targets["v2.9"]
    expected: str
    found: str
    why: str = ""  # what it means, in a few words


class VerificationFailedError(UserError):
    """The image is not what the release policy requires. Exit status 1."""

    exit_status = EXIT_CHECKS_FAILED

    def __init__(self, image: str, digest: str, reason: Reason, fix: str = FIX) -> None:
        why = f" ({reason.why})" if reason.why else ""
        super().__init__(
            cause=f"{image} (digest {digest}) failed verification: {reason.field}: expected {reason.expected}, "
            f"found {reason.found}{why}",
            fix=fix,
        )
        self.image = image
        self.digest = digest
        self.reason = reason
