"""Does this engine leave a layer's directory behind when a --no-cache rebuild makes an identical layer?

Docker 20.10 (BuildKit 0.8) does: the layer store keeps the first build's copy of an identical layer, and the
second build's snapshot directory under <data root>/overlay2 is then referenced by nothing; neither removing the
image nor pruning every build cache record frees it (measured: an 8 MB layer rebuilt identically left 1 directory,
one rebuilt with other bytes left none). A second cold build of a 7.5 GB image that is reproducible would leave
7.5 GB behind on every run. This probe builds a 1 MB layer of its own names twice and looks.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path

import docker

from pytorch_cuda.engine.build_cache import cache_records, drop_records
from pytorch_cuda.engine.build_client import find_build_client
from pytorch_cuda.engine.docker_engine import DockerEngine
from pytorch_cuda.engine.protocol import EngineBuild


def identical_rebuild_leaks(client: docker.DockerClient, base_ref: str) -> bool | None:
    """True when the engine leaves the directory of an identical rebuilt layer behind; None when this process
    cannot see the engine's data root (a remote engine, not root) and so cannot tell."""
    overlay = Path(str(client.info().get("DockerRootDir") or "/var/lib/docker")) / "overlay2"
    if not overlay.is_dir():
        return None
    token = uuid.uuid4().hex[:12]
    engine = DockerEngine(client, find_build_client())
    with tempfile.TemporaryDirectory(prefix="pytorch-cuda-leak-probe-") as folder:
        context = Path(folder)
        dockerfile = context / "Dockerfile"
        dockerfile.write_text(
            f"FROM {base_ref}\nRUN head -c 1M /dev/zero > /opt/{token}.bin && touch --date=@0 /opt/{token}.bin /opt\n"
        )
        tag = f"pytorch-cuda-leak-probe:{token}"
        try:
            for ref, again in ((tag, False), (f"{tag}-again", True)):
                engine.build(EngineBuild(dockerfile, context, ref, {}, no_cache=again, created_epoch=0), lambda _: None)
        finally:
            engine.untag(f"{tag}-again")
            engine.untag(tag)
            drop_records(client, [r for r in cache_records(client).values() if token in r.description])
    return any(overlay.glob(f"*/diff/opt/{token}.bin"))
