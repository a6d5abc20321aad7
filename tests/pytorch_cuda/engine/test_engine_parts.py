from __future__ import annotations

from pathlib import Path

import docker.errors
import pytest

from pytorch_cuda.engine.build_client import BuildClient
from pytorch_cuda.engine.build_failure import explain_build_failure
from pytorch_cuda.engine.buildkit_log import BuildKitParser, RunningSteps, minutes
from pytorch_cuda.engine.connection import explain_connection_error
from pytorch_cuda.engine.protocol import EngineBuild
from pytorch_cuda.errors import UserError
from pytorch_cuda.network.ca_bundle import find_ca_bundle

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def test_classic_buildkit_command(tmp_path: Path) -> None:
    client = BuildClient("docker-build", ("/usr/bin/docker", "build"), {"DOCKER_BUILDKIT": "1"})
    request = EngineBuild(
        dockerfile=tmp_path / "Dockerfile",
        context=tmp_path,
        tag="r:candidate",
        labels={"b": "2", "a": "1"},
        secrets={"pip_ca": Path("/ca.pem")},
    )
    argv = client.command(request)
    assert argv[:3] == ["/usr/bin/docker", "build", "--progress=plain"]
    assert argv[argv.index("--secret") + 1] == "id=pip_ca,src=/ca.pem"
    assert argv.index("a=1") < argv.index("b=2")
    assert argv[-1] == str(tmp_path)


def test_buildx_command_loads_into_the_engine(tmp_path: Path) -> None:
    client = BuildClient("buildx", ("docker", "buildx", "build", "--load"))
    argv = client.command(EngineBuild(tmp_path / "D", tmp_path, "r:t", {}))
    assert argv[:4] == ["docker", "buildx", "build", "--load"]
    assert "--secret" not in argv


def test_parser_tracks_steps_cache_and_errors() -> None:
    parser = BuildKitParser()
    lines = [
        "#5 [stage-0 2/6] RUN apt-get update",
        "#5 CACHED",
        "#6 [stage-0 3/6] RUN pip install torch",
        "#6 12.3 Downloading torch (899.7 MB)",
        "#6 ERROR: executor failed running",
        "#7 DONE 1.5s",
    ]
    events = [parser.feed(line) for line in lines]
    kinds = [(e.kind, e.step, e.text) for e in events if e]
    assert kinds[0] == ("step", "[stage-0 2/6] RUN apt-get update", "")
    assert kinds[1] == ("cached", "[stage-0 2/6] RUN apt-get update", "")
    assert kinds[3] == ("log", "[stage-0 3/6] RUN pip install torch", "Downloading torch (899.7 MB)")
    assert kinds[4][0] == "error"
    assert kinds[5] == ("done", "#7", "1.5s")


def test_heartbeat_names_the_longest_running_step_with_its_own_time() -> None:
    """BuildKit runs stages side by side: the heartbeat must not blame the last step to start, nor give it
    the whole build's time (a 7 s SBOM step was once shown as "still running after 1m30s")."""
    parser, running = BuildKitParser(), RunningSteps()
    timeline = [
        (0.0, "#4 [packages 3/7] RUN uv pip install torch"),
        (20.0, "#9 [sbom 2/2] RUN cyclonedx-py environment"),
        (21.0, "#10 [image 1/12] RUN cc --version"),
        (22.0, "#10 DONE 1.0s"),
        (40.0, "#4 DONE 40.0s"),
    ]
    seen: list[tuple[str, float] | None] = []
    for now, line in timeline:
        event = parser.feed(line)
        assert event is not None
        running.observe(event, now)
        seen.append(running.longest(now + 5.0))
    assert seen[2] == ("[packages 3/7] RUN uv pip install torch", 26.0)
    assert seen[4] == ("[sbom 2/2] RUN cyclonedx-py environment", 25.0)
    running.observe(parser.feed("#9 DONE 25.0s") or pytest.fail("no event"), 45.0)
    assert running.longest(50.0) is None
    assert (minutes(42.9), minutes(725.0)) == ("0m42s", "12m05s")


@pytest.mark.parametrize(
    ("log", "cause", "fix"),
    [
        ("write /var/lib/docker/x: no space left on device", "disk", "prune"),
        ("SSLError(SSLCertVerificationError('certificate verify failed'))", "TLS certificate", "--ca-bundle"),
        ("ERROR: No matching distribution found for torch==2.9.7", "torch==2.9.7", "matrix.yaml"),
        ("Failed to establish a new connection: [Errno 111]", "download", "reachable"),
        ("E: Unable to locate package pyhton3", "apt", "package"),
        ("something odd happened", "failed at step", "correct"),
    ],
)
def test_build_failures_are_explained(log: str, cause: str, fix: str) -> None:
    error = explain_build_failure(log, Path("/logs/b.log"), "[6/6] RUN pip")
    assert cause in error.cause
    assert fix in error.fix
    assert "/logs/b.log" in error.cause


def test_ca_bundle_precedence(tmp_path: Path) -> None:
    flag, env = tmp_path / "flag.pem", tmp_path / "env.pem"
    flag.write_text(PEM)
    env.write_text(PEM)
    assert find_ca_bundle(flag, {"PIP_CERT": str(env)}).source == "--ca-bundle"  # type: ignore[union-attr]
    found = find_ca_bundle(None, {"SSL_CERT_FILE": str(env), "REQUESTS_CA_BUNDLE": "/x"})
    assert found is not None
    assert found.source == "SSL_CERT_FILE"
    assert find_ca_bundle(None, {}) is None


def test_bad_ca_bundles_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        find_ca_bundle(tmp_path / "missing.pem", {})
    junk = tmp_path / "junk.pem"
    junk.write_text("not a cert")
    with pytest.raises(UserError, match="no PEM certificate"):
        find_ca_bundle(None, {"PIP_CERT": str(junk)})


@pytest.mark.parametrize(
    ("text", "cause", "fix"),
    [
        (
            "Error while fetching server API version: "
            "('Connection aborted.', PermissionError(13, 'Permission denied'))",
            "refused this user",
            "docker' group",
        ),
        (
            "Error while fetching server API version: ('Connection aborted.', FileNotFoundError(2, 'No such file'))",
            "no Docker engine is running",
            "setup-docker.sh",
        ),
        ("Error while fetching server API version: Read timed out", "did not answer", "setup-docker.sh"),
    ],
)
def test_engine_connection_errors_name_cause_and_fix(text: str, cause: str, fix: str) -> None:
    error = explain_connection_error("unix:///var/run/docker.sock", docker.errors.DockerException(text))
    assert cause in error.cause
    assert fix in error.fix


def test_the_heartbeat_line_gives_the_steps_time_and_the_builds() -> None:
    from rich.console import Console

    from pytorch_cuda.console.progress import console_progress
    from pytorch_cuda.engine.protocol import ProgressEvent

    console = Console(record=True, width=200)
    sink = console_progress(console)
    sink(ProgressEvent("tick", "[sbom 2/2] RUN cyclonedx-py environment", "0m25s (build 1m30s)"))
    sink(ProgressEvent("tick", "", "build 2m00s"))
    assert console.export_text().splitlines() == [
        "      ... running for 0m25s (build 1m30s): [sbom 2/2] RUN cyclonedx-py environment",
        "      ... build 2m00s",
    ]
