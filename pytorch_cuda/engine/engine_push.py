"""Push images and read registry digests through the engine, so its logins and insecure-registry rules apply."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

import docker
import docker.errors
import requests.exceptions

from pytorch_cuda.engine.protocol import PushResult, RegistryError, TransientRegistryError
from pytorch_cuda.references import parse_reference

PROGRESS_EVERY_S = 30.0
# Failures another try may fix; anything else (unauthorized, denied, unknown image, a
# registry that speaks HTTP where HTTPS was expected) fails at once.
_TRANSIENT = (
    "timeout",
    "timed out",
    "connection reset",
    "connection refused",
    "broken pipe",
    "eof",
    "toomanyrequests",
    "too many requests",
    "429",
    "500 internal",
    "502",
    "503",
    "504",
    "bad gateway",
    "service unavailable",
    "temporarily unavailable",
    "tls handshake",
)


def registry_error(message: str) -> RegistryError:
    """The right kind of RegistryError for an engine or registry message."""
    text = " ".join(message.split())[:400]
    lowered = text.lower()
    if any(marker in lowered for marker in _TRANSIENT):
        return TransientRegistryError(text)
    return RegistryError(text)


def push_image(client: docker.DockerClient, ref: str, on_progress: Callable[[str], None]) -> PushResult:
    repository, tag = parse_reference(ref).pull_args
    try:
        events = client.api.push(repository, tag=tag, stream=True, decode=True)
        return read_push_stream(ref, events, on_progress)
    except requests.exceptions.RequestException as exc:  # the engine's connection dropped or timed out
        raise TransientRegistryError(f"{type(exc).__name__}: {exc}") from exc
    except docker.errors.APIError as exc:
        raise registry_error(str(exc.explanation or exc)) from exc


def read_push_stream(
    ref: str,
    events: Iterable[Mapping[str, object]],
    on_progress: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> PushResult:
    """Fold the engine's push stream into the digest and each layer's last status; errors become RegistryErrors."""
    layers: dict[str, str] = {}
    sizes: dict[str, tuple[int, int]] = {}  # layer -> (bytes read so far, its size), from "Pushing" events
    digest = ""
    last_report = clock()
    for event in events:
        if event.get("error"):
            detail = event.get("errorDetail")
            message = detail.get("message") if isinstance(detail, Mapping) else None
            raise registry_error(str(message or event["error"]))
        aux = event.get("aux")
        if isinstance(aux, Mapping) and isinstance(aux.get("Digest"), str):
            digest = str(aux["Digest"])
        layer, status = event.get("id"), event.get("status")
        if isinstance(layer, str) and isinstance(status, str) and status not in ("Preparing", "Waiting"):
            layers[layer] = "Pushing" if status.startswith("Pushing") else status
            detail = event.get("progressDetail")
            if isinstance(detail, Mapping) and isinstance(detail.get("total"), int):
                sizes[layer] = (int(detail.get("current") or 0), int(detail["total"]))
        if clock() - last_report >= PROGRESS_EVERY_S:
            last_report = clock()
            on_progress(_progress_line(ref, layers, sizes))
    if not digest:
        raise RegistryError(f"the engine pushed {ref} but reported no digest")
    return PushResult(ref, digest, layers)


def _progress_line(ref: str, layers: Mapping[str, str], sizes: Mapping[str, tuple[int, int]]) -> str:
    done = sum(not status.startswith(("Pushing", "Retrying")) for status in layers.values())
    sending = [layer for layer, status in layers.items() if status == "Pushing" and layer in sizes]
    read = sum(min(sizes[layer]) for layer in sending)
    total = sum(sizes[layer][1] for layer in sending)
    busy = f"; sending {len(sending)} ({read / 1e9:.2f} of {total / 1e9:.2f} GB read)" if sending else ""
    return f"pushing {ref}: {done} of {len(layers)} layers done{busy}"


def registry_digest(client: docker.DockerClient, ref: str) -> str | None:
    try:
        data = client.images.get_registry_data(ref)
    except docker.errors.NotFound:
        return None
    except requests.exceptions.RequestException as exc:
        raise TransientRegistryError(f"{type(exc).__name__}: {exc}") from exc
    except docker.errors.APIError as exc:
        text = str(exc.explanation or exc)
        if "manifest unknown" in text or "name unknown" in text or "not found" in text.lower():
            return None
        raise registry_error(text) from exc
    return str(data.id)
