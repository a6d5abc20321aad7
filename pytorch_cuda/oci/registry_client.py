"""The registry calls bump and release need, through oras-py's authenticated requests (docker login's credentials
and credential helpers, loaded for every call): a manifest's exact bytes, blobs checked against their digests, and
blob and manifest uploads of exact bytes (cosign's layout, the referrers tag, the release index)."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from pytorch_cuda.errors import UserError
from pytorch_cuda.references import ImageReference, parse_reference, registry_host

# oras is imported where a registry is called, not here: it imports jsonschema, whose format checkers import
# rfc3987_syntax, which builds a grammar at import (about 1.3 s). Every build.py command imports this module
# (bump and release are among its verbs); only those that reach a registry pay for it.


def _import_oras() -> None:
    """Import oras-py without rfc3987_syntax: jsonschema's optional `iri` format checker imports it, which builds a
    grammar (1.2 s of every `release` call); oras-py's schemas never use `iri`. The stub is removed at once, so an
    explicit import elsewhere still gets the real module."""
    if "oras.provider" in sys.modules or "jsonschema._format" in sys.modules:
        return
    if "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # None: ImportError, which it suppresses
    try:
        import oras.provider  # noqa: F401
    finally:
        if sys.modules.get("rfc3987_syntax", ...) is None:
            del sys.modules["rfc3987_syntax"]


MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)


class RegistryAccessError(UserError):
    """The registry did not answer, refused us, or has no such manifest."""


class ResponseTooLargeError(RegistryAccessError):
    """An answer larger than its cap: refused by the size the registry declares (Content-Length, or a descriptor's
    size) before any byte is read, or as its bytes arrive when the declaration is missing or lies. Exit status 2."""


class BlobTooLargeError(ResponseTooLargeError):
    """A blob larger than its reader allows, refused as its bytes arrive. Exit status 2."""


class ManifestTooLargeError(ResponseTooLargeError):
    """A manifest (or the referrers tag's index) larger than MOST_MANIFEST_BYTES. Exit status 2."""


class ReferrersTooLargeError(ResponseTooLargeError):
    """The referrers API's answer larger than MOST_MANIFEST_BYTES. Exit status 2."""


# OCI distribution: a registry must accept manifests up to 4 MiB; none this project reads or writes comes near it
MOST_MANIFEST_BYTES = 4 << 20
TOO_LARGE_FIX = "an answer this large is not one this project writes: do not trust it; find who pushed it"


@dataclass(frozen=True)
class RegistryManifest:
    ref: str
    media_type: str
    raw: bytes

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.raw).hexdigest()


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and localhost speak plain HTTP, as the Docker engine allows them to."""
    name = urllib.parse.urlsplit(f"//{host}").hostname or ""
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def reference(text: str) -> ImageReference:
    ref = parse_reference(text)
    if registry_host(ref.repository) is None:
        raise RegistryAccessError(
            cause=f"{text!r} names no registry host",
            fix="give the whole reference, e.g. 127.0.0.1:5000/ci/pytorch-cuda:v2.9 or "
            "ghcr.io/OWNER/pytorch-cuda@sha256:...",
        )
    return ref


class RegistryClient:
    """One registry host; plain HTTP for loopback hosts, HTTPS (verified) otherwise."""

    def __init__(self, host: str) -> None:
        self.host = host
        self._insecure = is_loopback(host)
        self._scheme = "http" if self._insecure else "https"
        self._oras = self._registry("token")
        self._probed = False

    def _registry(self, backend: str) -> Any:
        _import_oras()
        import oras.provider

        registry = oras.provider.Registry(
            self.host, insecure=self._insecure, tls_verify=not self._insecure, auth_backend=backend
        )
        # docker login's credentials for this host, for every call (GETs too): ~/.docker/config.json's `auths`,
        # its `credHelpers` for the host, or its `credsStore` (docker-credential-<helper> get); $DOCKER_CONFIG
        # names another folder. oras-py loads them itself only when it pushes.
        configs = [str(Path(os.environ["DOCKER_CONFIG"]) / "config.json")] if os.environ.get("DOCKER_CONFIG") else []
        registry.auth.load_configs(registry.get_container(f"{self.host}/credentials"), configs=configs)
        return registry

    def _choose_backend(self) -> None:
        """The registry's challenge on /v2/ picks oras-py's auth backend, once: Bearer (GHCR, Docker Hub: a token
        bought with the credentials) or Basic (an htpasswd registry: the credentials on every call). oras-py's
        token backend takes a Basic realm for a token URL and fails resolving it as a host name."""
        self._probed = True
        if not self._challenge().lower().startswith("basic"):
            return
        self._oras = self._registry("basic")
        if not self._oras.auth._load_auth(self.host):
            raise RegistryAccessError(
                cause=f"the registry {self.host} asks for Basic credentials (htpasswd) and docker's configuration "
                f"has none for {self.host}",
                fix=f"`docker login {self.host}` (or skopeo/oras login), or set $DOCKER_CONFIG to a folder whose "
                "config.json has them",
            )

    def _challenge(self) -> str:
        """The scheme and parameters the registry asks for on /v2/ (empty when it asks for none)."""
        try:
            answer = requests.get(f"{self._scheme}://{self.host}/v2/", timeout=30, verify=True)
        except requests.RequestException as exc:
            raise RegistryAccessError(
                cause=f"the registry {self.host} did not answer on /v2/ ({type(exc).__name__}: {exc})",
                fix="check that it is up, and the host name and port",
            ) from exc
        return str(answer.headers.get("Www-Authenticate", "")) if answer.status_code == 401 else ""

    @classmethod
    def for_ref(cls, ref: ImageReference) -> RegistryClient:
        host = registry_host(ref.repository)
        assert host is not None  # reference() checked it
        return cls(host)

    def _path(self, ref: ImageReference) -> str:
        return ref.repository[len(self.host) + 1 :]

    def _get(self, url: str, headers: dict[str, str], what: str) -> requests.Response:
        return self._request("GET", url, headers, None, what)

    def _request(
        self, method: str, url: str, headers: dict[str, str], data: bytes | None, what: str, *, stream: bool = False
    ) -> requests.Response:
        if not self._probed:
            self._choose_backend()
        try:
            # oras-py's do_request without its retry decorator, which sleeps 131 s before a refused login fails
            once = type(self._oras).do_request.__wrapped__
            response: requests.Response = once(self._oras, url, method, data=data, headers=dict(headers), stream=stream)
        except (requests.RequestException, ValueError) as exc:
            raise RegistryAccessError(
                cause=f"the registry {self.host} did not answer for {what} ({type(exc).__name__}: {exc})",
                fix="check that it is up and that `docker login` (or skopeo/oras login) was run for it",
            ) from exc
        return response

    def manifest(self, text: str, limit: int = MOST_MANIFEST_BYTES) -> RegistryManifest | None:
        """The manifest's bytes exactly as the registry serves them, or None when the tag or digest is unknown;
        refused (ManifestTooLargeError) when it declares or sends more than `limit` bytes."""
        ref = reference(text)
        what = ref.digest or ref.tag or "latest"
        url = f"{self._scheme}://{self.host}/v2/{self._path(ref)}/manifests/{what}"
        response = self._request("GET", url, {"Accept": ", ".join(MANIFEST_TYPES)}, None, text, stream=True)
        with response:
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                raise RegistryAccessError(
                    cause=f"the registry answered {response.status_code} for the manifest of {text}: {_head(response)}",
                    fix="check the reference and the registry login",
                )
            media_type = response.headers.get("Content-Type", "").split(";")[0].strip()
            raw = _read_capped(response, limit, ManifestTooLargeError, f"the manifest of {text}")
        return RegistryManifest(text, media_type, raw)

    def referrers_api(self, text: str, digest: str, limit: int = MOST_MANIFEST_BYTES) -> bytes | None:
        """The image index the registry's referrers API (OCI distribution 1.1) lists for `digest`, or None where
        it has no such API (GHCR and Distribution 2.8 answer 404: read the `sha256-<hex>` tag instead); refused
        (ReferrersTooLargeError) when it declares or sends more than `limit` bytes."""
        ref = reference(text)
        url = f"{self._scheme}://{self.host}/v2/{self._path(ref)}/referrers/{digest}"
        what = f"the referrers of {digest}"
        response = self._request("GET", url, {"Accept": MANIFEST_TYPES[0]}, None, what, stream=True)
        with response:
            kind = response.headers.get("Content-Type", "").split(";")[0].strip()
            if response.status_code != 200 or kind != MANIFEST_TYPES[0]:
                return None
            return _read_capped(response, limit, ReferrersTooLargeError, f"the referrers API's answer for {digest}")

    def blob(self, ref: ImageReference, digest: str, limit: int = 64 << 20) -> bytes:
        """A blob, checked against its digest; read as a stream and refused once more than `limit` bytes arrive
        (or the registry announces more), so an oversized blob never sits in memory."""
        url = f"{self._scheme}://{self.host}/v2/{self._path(ref)}/blobs/{digest}"
        response = self._request("GET", url, {}, None, f"blob {digest}", stream=True)
        with response:
            if response.status_code != 200:
                raise RegistryAccessError(
                    cause=f"the registry answered {response.status_code} for blob {digest} of {ref.repository}",
                    fix="the attachment is incomplete: sign the image again",
                )
            data = _read_capped(response, limit, BlobTooLargeError, f"blob {digest} of {ref.repository}")
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise RegistryAccessError(
                cause=f"blob {digest} of {ref.repository} does not hash to its digest",
                fix="the registry served other bytes than were pushed: do not trust it; sign the image again",
            )
        return data

    def tags_page(self, repository: str, last: str, n: int = 100) -> list[str]:
        """At most `n` of the repository's tags that sort after `last` (the distribution API's lexical order,
        `GET /v2/<name>/tags/list?n=N&last=L`); the answer is capped like a manifest."""
        ref = reference(f"{repository}:x")
        url = f"{self._scheme}://{self.host}/v2/{self._path(ref)}/tags/list?n={n}&last={last}"
        response = self._request("GET", url, {"Accept": "application/json"}, None, f"the tags of {repository}",
                                 stream=True)  # fmt: skip
        with response:
            if response.status_code == 404:
                return []
            if response.status_code != 200:
                raise self._refused(response, f"listing the tags of {repository}")
            raw = _read_capped(response, MOST_MANIFEST_BYTES, ManifestTooLargeError, f"the tag list of {repository}")
        tags = json.loads(raw).get("tags") or []
        return [str(tag) for tag in tags][:n]

    def push_blob(self, ref: ImageReference, data: bytes) -> str:
        """Upload `data` as a blob of the repository (a monolithic upload), unless it is there; its digest."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        base = f"{self._scheme}://{self.host}/v2/{self._path(ref)}/blobs"
        if self._request("HEAD", f"{base}/{digest}", {}, None, f"blob {digest}").status_code == 200:
            return digest
        started = self._request("POST", f"{base}/uploads/", {}, None, f"an upload to {ref.repository}")
        location = started.headers.get("Location", "")
        if started.status_code != 202 or not location:
            raise self._refused(started, f"starting an upload to {ref.repository}")
        if location.startswith("/"):
            location = f"{self._scheme}://{self.host}{location}"
        separator = "&" if "?" in location else "?"
        headers = {"Content-Type": "application/octet-stream"}
        done = self._request("PUT", f"{location}{separator}digest={digest}", headers, data, f"blob {digest}")
        if done.status_code != 201:
            raise self._refused(done, f"uploading blob {digest} to {ref.repository}")
        return digest

    def push_manifest(self, target: str, raw: bytes, media_type: str) -> str:
        """PUT these exact bytes as the manifest `target` (repository:tag); return the digest the registry gave."""
        ref = reference(target)
        url = f"{self._scheme}://{self.host}/v2/{self._path(ref)}/manifests/{ref.tag or ref.digest}"
        response = self._request("PUT", url, {"Content-Type": media_type}, raw, target)
        if response.status_code != 201:
            raise self._refused(response, f"pushing the manifest {target}")
        return str(response.headers.get("Docker-Content-Digest", ""))

    def _refused(self, response: requests.Response, what: str) -> RegistryAccessError:
        return RegistryAccessError(
            cause=f"the registry {self.host} answered {response.status_code} to {what}: {response.text[:300]}",
            fix="check that the login (docker login, or a credential helper) may push to this repository",
        )


def _head(response: requests.Response) -> str:
    """The first 300 bytes of an error answer's body, never more: the rest is not read."""
    return next(response.iter_content(chunk_size=300), b"")[:300].decode("utf-8", "replace")


def _read_capped(response: requests.Response, limit: int, error: type[ResponseTooLargeError], what: str) -> bytes:
    """The body, refused before reading when Content-Length declares more than `limit` bytes, and as its bytes
    arrive when more than `limit` come (no Content-Length, chunked, or a decompressed body larger than declared)."""
    declared = response.headers.get("Content-Length", "")
    announced = int(declared) if declared.isdigit() else None
    data = bytearray()
    if announced is None or announced <= limit:
        try:
            for chunk in response.iter_content(chunk_size=1 << 16):
                data += chunk
                if len(data) > limit:
                    break
        except requests.RequestException as exc:
            raise RegistryAccessError(
                cause=f"the registry broke off {what} ({type(exc).__name__}: {exc})",
                fix="check that it is up; a registry that declares one size and sends another is not to be trusted",
            ) from exc
    if announced is not None and announced > limit:
        raise error(
            cause=f"{what} is larger than the {limit} bytes allowed for it (the registry declares {announced} "
            "bytes): refused before reading",
            fix=TOO_LARGE_FIX,
        )
    if len(data) > limit:
        said = f"declared {announced}" if announced is not None else "declared no size"
        raise error(
            cause=f"{what} is larger than the {limit} bytes allowed for it (more than {limit} bytes arrived; the "
            f"registry {said}): read no further",
            fix=TOO_LARGE_FIX,
        )
    return bytes(data)


def open_image(text: str) -> tuple[RegistryClient, RegistryManifest]:
    """The client for the image's registry and its manifest; refused when the registry has no such image, or
    serves bytes that do not hash to the digest asked for."""
    ref = reference(text)
    client = RegistryClient.for_ref(ref)
    image = client.manifest(text)
    if image is None:
        raise RegistryAccessError(cause=f"the registry has no image {text}", fix="check the reference and the login")
    if ref.digest is not None and image.digest != ref.digest:
        raise RegistryAccessError(
            cause=f"the registry served {image.digest} for {text}",
            fix="do not use it: the registry is not serving the bytes you asked for",
        )
    return client, image
