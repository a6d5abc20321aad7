"""A failed build explained: a killed client, a lost daemon connection, a download that does not match the lock."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from pytorch_cuda.engine.build_failure import HashMismatchError, explain_build_failure, lock_as_mounted
from pytorch_cuda.engine.buildkit_log import short_step
from pytorch_cuda.engine.client_failure import ended_by_signal
from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.resolving import installed_lock

LOG = Path("/logs/build-cu128-runtime.log")
LAYER_3 = (
    "[image  7/14] RUN --mount=type=bind,from=installer,source=/opt/installer/bin,target=/tmp/installer     "
    "--mount=type=bind,source=images/cu128-runtime/layer-3-python.lock,target=/tmp/layer-3-python.lock     "
    "--mount=type=cache,id=uv-cu128,target=/var/cache/uv-build,uid=1000,gid=1000"
)
INSTALLER = (
    "[installer 1/1] RUN --mount=type=bind,source=images/installer.lock,target=/tmp/installer.lock     "
    "--mount=type=cache,id=pip-installer,target=/var/cache/pip-build"
)
# What uv 0.13.9 prints, in BuildKit's plain progress, for a wheel whose bytes hash to none of the lock's hashes.
UV_MISMATCH = """\
#17 [image  7/14] RUN --mount=type=bind,from=installer,source=/opt/installer/bin,target=/tmp/installer
#17 1.204 error: Failed to download `jinja2==3.1.6`
#17 1.204   cause: Hash mismatch for `jinja2==3.1.6`
#17 1.204
#17 1.204          Expected:
#17 1.204            sha256:0137fb05990d35f1275a587e9aee6d56da821fc83491a0fb838183be43f66d00
#17 1.204
#17 1.204          Computed:
#17 1.204            sha256:85ece4451f492d0c13c5dd7c13a64681a86afae63a5f347908daf103ce6d2f67
#17 ERROR: executor failed running [/bin/bash -o pipefail -c uv pip install]: exit code: 1
"""
PIP_MISMATCH = """\
#9 5.210 ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package \
versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have tampered with \
them.
#9 5.210     uv==0.13.9 from https://files.pythonhosted.org/packages/uv-0.13.9-py3-none-manylinux_2_28_x86_64.whl:
#9 5.210         Expected sha256 0000
#9 5.210              Got        1111
#9 ERROR: executor failed running [/bin/bash -o pipefail -c pip install]: exit code: 1
"""
RUNNING = """\
#14 [image  5/14] RUN --mount=type=bind,from=installer,source=/opt/installer/bin,target=/tmp/installer
#14 12.3 Downloading nvidia-cublas-cu12 (566.8 MiB)
#14 14.0 WARNING: Retrying after ConnectionResetError(104, 'Connection reset by peer')
"""


@pytest.mark.parametrize(
    ("exit_code", "expected"),
    [
        (-9, signal.SIGKILL),  # Popen: killed by SIGKILL
        (-15, signal.SIGTERM),
        (137, signal.SIGKILL),  # a shell or wrapper in between reports 128 + 9
        (1, None),  # the client's own failure: a step failed
        (0, None),
        (130, None),  # 128 + SIGINT: Ctrl-C is handled as an interrupt, not here
    ],
)
def test_the_signal_that_ended_the_client(exit_code: int, expected: signal.Signals | None) -> None:
    assert ended_by_signal(exit_code) == expected


def test_a_killed_client_is_named_with_its_signal_and_the_step_it_stopped() -> None:
    error = explain_build_failure(RUNNING, LOG, "", exit_code=-9, client="/usr/bin/docker build", running_step=LAYER_3)
    assert error.exit_status == 2
    assert "the build client (`/usr/bin/docker build`) was killed by signal 9 (SIGKILL)" in error.cause
    assert "during step [image 7/14] RUN (installs images/cu128-runtime/layer-3-python.lock)," in error.cause
    assert "no image was tagged" in error.cause
    assert str(LOG) in error.cause
    assert "build again" in error.fix
    assert "build cache" in error.fix
    assert "OOM" in error.fix
    # The step's own output (a retried download) does not hide why the build stopped.
    assert "download" not in error.cause


@pytest.mark.parametrize(
    "said",
    [
        "unexpected EOF",  # Docker 20.10's `docker build` when its socket to the daemon was cut (seen here)
        "ERROR: failed to receive status: rpc error: code = Unavailable desc = error reading from server: EOF",
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
    ],
)
def test_a_lost_daemon_connection_is_told_from_a_failed_step(said: str) -> None:
    log = RUNNING + said + "\n"
    error = explain_build_failure(log, LOG, "", exit_code=1, client="docker buildx build --load", running_step="x")
    assert "the build client (`docker buildx build --load`) lost its connection to the Docker daemon" in error.cause
    assert "during step x" in error.cause
    assert said[:60] in error.cause
    assert "docker info" in error.fix
    assert "build cache" in error.fix


def test_the_clients_eof_glued_to_a_steps_unfinished_line_is_a_lost_connection() -> None:
    """Seen here: the proxy cut the socket while apt printed "Reading package lists..." with no newline yet."""
    log = RUNNING + "#5 2.458 Fetched 16.9 MB in 2s (8108 kB/s)\n#5 2.458 Reading package lists...unexpected EOF\n"
    error = explain_build_failure(log, LOG, "", exit_code=1, client="/usr/bin/docker build", running_step="x")
    assert "lost its connection to the Docker daemon during step x (unexpected EOF)" in error.cause
    # A step's own error that ends in the same words, after ": ", is not the client's.
    log = RUNNING + "#5 3.1 error: read tcp 10.0.0.2:443: unexpected EOF\n"
    assert "lost its connection" not in explain_build_failure(log, LOG, "", exit_code=1).cause


@pytest.mark.parametrize("prefix", ["#14 20.1 ", "", "  "])  # a step's output, or its repetition in the summary
def test_a_connection_reset_inside_a_failed_step_is_a_download_not_a_lost_daemon(prefix: str) -> None:
    log = RUNNING + f"{prefix}ERROR: Could not install packages due to an OSError: Connection reset by peer\n"
    error = explain_build_failure(log, LOG, "[image  5/14] RUN uv pip", exit_code=1)
    assert "a download inside the build failed" in error.cause
    assert "daemon" not in error.cause


def test_uv_hash_mismatch_names_the_package_and_the_lock() -> None:
    error = explain_build_failure(UV_MISMATCH, LOG, LAYER_3, exit_code=1)
    assert isinstance(error, HashMismatchError)
    assert (error.package, error.bound) == ("jinja2==3.1.6", "images/cu128-runtime/layer-3-python.lock")
    assert error.cause.startswith("the download of jinja2==3.1.6 inside the build does not match its hash in ")
    assert "images/cu128-runtime/layer-3-python.lock (the build installs with --require-hashes" in error.cause
    assert "download inside the build failed" not in error.cause  # not mistaken for a network failure
    # The pipeline hands in the locks room's naming: the slice's requirements.lock and its target's command.
    named = error.naming_locks(installed_lock)
    assert type(named) is EngineError  # `--json` still says "EngineError"
    assert "images/cu128-runtime/requirements.lock (its layer slice layer-3-python.lock)" in named.cause
    assert "--require-hashes" in named.cause
    assert "`python build.py lock --target cu128`" in named.fix
    assert "mirror" in named.fix


def test_pip_hash_mismatch_in_a_tool_stage_names_the_tool_lock() -> None:
    error = explain_build_failure(PIP_MISMATCH, LOG, INSTALLER, exit_code=1)
    assert isinstance(error, HashMismatchError)
    named = error.naming_locks(installed_lock)
    assert "the download of uv==0.13.9" in named.cause
    assert "images/installer.lock" in named.cause
    assert "`python build.py lock`" in named.fix


def test_the_engine_alone_names_the_lock_as_the_step_mounts_it() -> None:
    """build_failure.py knows no lock file names: without the locks room's naming, the mounted file and `lock`."""
    assert lock_as_mounted("images/cu128-runtime/layer-3-python.lock") == (
        "images/cu128-runtime/layer-3-python.lock", "python build.py lock"
    )  # fmt: skip
    assert lock_as_mounted(None) == ("the lock", "python build.py lock")


@pytest.mark.parametrize(
    ("step", "shown"),
    [
        (LAYER_3, "[image 7/14] RUN (installs images/cu128-runtime/layer-3-python.lock)"),
        (INSTALLER, "[installer 1/1] RUN (installs images/installer.lock)"),
        ("[image  9/19] RUN pip check", "[image 9/19] RUN pip check"),
        ("[image  4/19] RUN " + "x " * 100, "[image 4/19] RUN " + "x " * 40 + "..."),  # cut at 100
    ],
)
def test_steps_are_named_short(step: str, shown: str) -> None:
    assert short_step(step) == shown


def test_each_explanation_is_one_paragraph() -> None:
    for error in (
        explain_build_failure(RUNNING, LOG, "", exit_code=-9, client="docker build", running_step="s"),
        explain_build_failure(UV_MISMATCH, LOG, LAYER_3),
    ):
        paragraph = error.paragraph()
        assert paragraph.startswith("error: ")
        assert "\n\n" not in paragraph
        assert " Fix: " in " ".join(paragraph.split())


def test_a_package_list_that_failed_to_download_is_an_apt_failure() -> None:
    """`apt-get update --error-on=any` (templates/partials/apt.j2) fails where plain `apt-get update` would warn,
    exit 0 and keep the cache mount's older list; what apt 3.0 prints then is named as apt's failure."""
    log = "#9 [system 2/4] RUN apt-get update --error-on=any\n" + (
        "#9 4.1 E: Failed to fetch http://deb.debian.org/debian-security/dists/trixie-security/InRelease  "
        "Could not resolve 'deb.debian.org'\n"
        "#9 4.1 E: Some index files failed to download. They have been ignored, or old ones used instead.\n"
    )
    error = explain_build_failure(log, LOG, "[system 2/4] RUN apt-get update", exit_code=1)
    assert "apt inside the build failed: Failed to fetch http://deb.debian.org/debian-security/" in error.cause
    assert "Debian archive" in error.fix
