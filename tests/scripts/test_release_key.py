"""scripts/release-key.sh, which release.yml's signing steps source: a KMS/HSM URI is used as it is; an encrypted
PEM key is written mode 600 and removed by the EXIT trap whatever happens; no key fails the step (exit 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEP = 'source scripts/release-key.sh; echo "key=$key"; stat -c %a "$key" 2>/dev/null; false'  # then fail


def step(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A workflow step's bash (-e -o pipefail) that sources the script, shows the key, then fails."""
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", STEP],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
        env={"PATH": "/usr/bin:/bin", "RUNNER_TEMP": str(tmp_path), **env},
    )  # fmt: skip


def test_no_key_fails_the_step_and_names_the_settings(tmp_path: Path) -> None:
    result = step(tmp_path)
    assert result.returncode == 1
    assert "::error::no release key: set the release environment's variable RELEASE_SIGNER_URI" in result.stdout
    assert "key=" not in result.stdout
    assert list(tmp_path.iterdir()) == []  # the trap removed the empty folder too
    assert step(tmp_path, RELEASE_SIGNING_KEY="PEM").returncode == 1  # a key without its passphrase: no key


def test_an_encrypted_key_is_written_private_and_removed_at_exit_even_on_failure(tmp_path: Path) -> None:
    pem = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----"
    result = step(tmp_path, RELEASE_SIGNING_KEY=pem, RELEASE_KEY_PASSPHRASE="p")
    assert result.returncode == 1  # the step's own `false`
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"key={tmp_path}/release-key.")
    assert lines[0].endswith("/release.key")
    assert lines[1] == "600"
    assert list(tmp_path.iterdir()) == []  # gone, though the step failed


def test_a_kms_uri_is_used_as_it_is(tmp_path: Path) -> None:
    result = step(tmp_path, RELEASE_SIGNER_URI="awskms:arn:aws:kms:eu-west-1:1:key/k", RELEASE_SIGNING_KEY="unused")
    assert result.stdout.splitlines()[0] == "key=awskms:arn:aws:kms:eu-west-1:1:key/k"
    assert list(tmp_path.iterdir()) == []
