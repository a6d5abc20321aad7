"""Connect to the Docker engine through the SDK, turning failures into one clear paragraph."""

from __future__ import annotations

import os

import docker
import docker.errors
import requests.exceptions

from pytorch_cuda.errors import EngineError

SETUP_HINT = (
    "run `sudo scripts/setup-docker.sh` (installs Debian's docker.io where no engine exists and starts dockerd)"
)


def connect() -> docker.DockerClient:
    """A client that has answered a ping, or an EngineError naming the cause and the fix."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except docker.errors.DockerException as exc:
        raise explain_connection_error(host, exc) from exc
    except requests.exceptions.ConnectionError as exc:
        raise explain_connection_error(host, exc) from exc
    return client


def explain_connection_error(host: str, exc: Exception) -> EngineError:
    text = str(exc)
    if "Permission denied" in text or isinstance(exc.__context__, PermissionError):
        return EngineError(
            cause=f"the Docker engine at {host} refused this user (permission denied on its socket)",
            fix="run as root, or add this user to the 'docker' group "
            "(`sudo usermod -aG docker $USER`, then log in again)",
        )
    if "No such file" in text or "Connection refused" in text or "FileNotFoundError" in text:
        return EngineError(cause=f"no Docker engine is running at {host}", fix=SETUP_HINT)
    return EngineError(cause=f"the Docker engine at {host} did not answer: {text.splitlines()[0]}", fix=SETUP_HINT)
