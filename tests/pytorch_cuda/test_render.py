from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pytorch_cuda.errors import UserError
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.variants import select_variant
from pytorch_cuda.render import (
    BUILD_ONLY_COMMANDS,
    COMMANDS,
    COMMANDS_DIR,
    find_stale,
    render_all,
    render_variant,
    write_rendered,
)


def test_committed_images_are_up_to_date(matrix: Matrix, root: Path) -> None:
    assert find_stale(render_all(matrix, root / "templates"), root) == []


def test_rendering_is_deterministic(matrix: Matrix, root: Path) -> None:
    first = render_all(matrix, root / "templates")
    assert first == render_all(matrix, root / "templates")
    assert {f.path.parent.name for f in first} >= {"cu126-runtime", "cu128-runtime", "cu130-runtime"}


def _copy_repo(root: Path, tmp_path: Path) -> Path:
    for name in ("templates", "images"):
        shutil.copytree(root / name, tmp_path / name)
    return tmp_path


def test_stale_file_is_reported_with_a_diff(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy_repo(root, tmp_path)
    dockerfile = copy / "images/cu128-runtime/Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("torch 2.9.1", "torch 2.9.0"))
    stale = find_stale(render_all(matrix, copy / "templates"), copy)
    assert [s.path for s in stale] == [Path("images/cu128-runtime/Dockerfile")]
    assert "-# pytorch-cuda cu128-runtime: torch 2.9.0+cu128" in stale[0].diff


def test_leftover_and_missing_and_mode(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy_repo(root, tmp_path)
    (copy / "images/cu999-runtime").mkdir()
    (copy / "images/cu999-runtime/Dockerfile").write_text("FROM scratch\n")
    (copy / "images/cu126-runtime/manifest.json").unlink()
    (copy / "images/bin/conformance").chmod(0o644)
    reasons = {str(s.path): s.reason for s in find_stale(render_all(matrix, copy / "templates"), copy)}
    assert reasons == {
        "images/cu999-runtime/Dockerfile": "not rendered from the matrix (left over)",
        "images/cu126-runtime/manifest.json": "missing",
        "images/bin/conformance": "is not executable",
    }
    write_rendered(render_all(matrix, copy / "templates"), copy)
    assert find_stale(render_all(matrix, copy / "templates"), copy) == []
    assert not (copy / "images/cu999-runtime").exists()


def test_undefined_template_value_is_a_user_error(matrix: Matrix, root: Path, tmp_path: Path) -> None:
    copy = _copy_repo(root, tmp_path)
    runtime = copy / "templates/runtime.Dockerfile.j2"
    runtime.write_text(runtime.read_text().replace("{%- endblock %}", "{{ target.no_such_pin }}{%- endblock %}"))
    with pytest.raises(UserError, match="undefined value"):
        render_variant(matrix, select_variant(matrix, "cu12"), copy / "templates")


CLAMP_MOUNTS = (
    "--mount=type=tmpfs,target=/tmp --mount=type=bind,source=images/bin/clamp-mtimes,target=/tmp/clamp-mtimes"
)


def test_dockerfile_shape(matrix: Matrix, root: Path) -> None:
    files = {f.path.name: f.content for f in render_variant(matrix, select_variant(matrix, "cu12"), root / "templates")}
    dockerfile = files["Dockerfile"]
    assert dockerfile.startswith("# Generated from templates/runtime.Dockerfile.j2")
    assert "Do not edit" in dockerfile
    assert "--mount=type=secret,id=pip_ca" in dockerfile
    # uv's cache is a cache mount under the RUN's tmpfs /tmp, so neither it nor its mount point is in a layer
    assert "--mount=type=cache,id=uv-cu128,target=/tmp/uv-cache,uid=1000,gid=1000" in dockerfile
    assert "--mount=type=secret,id=pip_ca,target=/tmp/secrets/pip_ca,uid=1000" in dockerfile
    assert "target=/home/torch" not in dockerfile  # a root-owned mount point in ~/.cache turns pip's cache off
    # uv installs without compiling; compile-bytecode writes the .pyc files (the same bytes on any machine)
    assert dockerfile.count("--require-hashes --no-deps --no-build -r") == 3
    assert dockerfile.count("\n && python -B /tmp/compile-bytecode") == 3
    assert dockerfile.count("--mount=type=bind,source=images/bin/compile-bytecode,target=/tmp/compile-bytecode") == 3
    assert "--compile-bytecode -r" not in dockerfile
    # a package list that failed to download fails the build (not kept from the cache mount: an older version)
    assert " && apt-get update --error-on=any \\\n" in dockerfile
    venv_stage = dockerfile.split("FROM system AS packages\n")[1].split("FROM system AS sbom-tool\n")[0]
    assert "pip install --no-input" not in venv_stage  # only uv installs the venv
    assert "install -m 0644 /tmp/variant/requirements.lock /etc/pytorch-cuda/requirements.lock" in dockerfile
    assert "source=images/cu128-runtime,target=/tmp/variant" in dockerfile
    assert "\nCOPY " not in dockerfile  # COPY takes the checkout's modes and times: every file arrives by RUN
    # every RUN of a shipped stage has a tmpfs /tmp and ends by clamping its mtimes (reproducible layers)
    shipped = [run for run in re.findall(r"^RUN (?:.*\\\n)*.*$", dockerfile, re.M) if "/tmp/clamp-mtimes" in run]
    assert len(shipped) >= 10
    for run in shipped:
        assert run.startswith(f"RUN {CLAMP_MOUNTS}"), run
        assert run.endswith("bash /tmp/clamp-mtimes"), run
    # every stage that ships files declares matrix.yaml's fixed file time (not the commit's: the cache holds)
    epoch = f"ARG SOURCE_DATE_EPOCH={matrix.project.source_date_epoch}\n"
    for stage in ("system", "packages", "image", "sbom"):
        assert re.search(rf"AS {stage}\n(?:ARG \w+\n|#.*\n)*{epoch}", dockerfile), stage
    assert f"\nFROM image\n{epoch}" in dockerfile
    assert "/var/log/dpkg.log /var/log/alternatives.log /var/cache/ldconfig/aux-cache" in dockerfile
    assert "/etc/ssl" not in dockerfile  # the CA only ever arrives as a secret
    assert "python3-dev" in dockerfile
    assert "g++" in dockerfile
    assert "\nUSER 1000\nWORKDIR /home/torch\n" in dockerfile  # numeric, for Kubernetes' runAsNonRoot
    assert 'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/pytorch-cuda-entry"]' in dockerfile
    assert "# syntax=" not in dockerfile  # the frontend image cannot be pulled offline
    assert "torch==2.9.1\n" in files["requirements.txt"]
    assert [name for name in files if name.startswith("layer-")] == [
        "layer-1-nvidia.lock",
        "layer-2-torch.lock",
        "layer-3-python.lock",
    ]
    assert "nvidia-cudnn-cu12==9.10.2.21" in files["requirements.txt"]
    assert '"torch": "2.9.1+cu128"' in files["manifest.json"]


def test_non_pypi_targets_use_their_index_alone(matrix: Matrix, root: Path) -> None:
    files = render_variant(matrix, select_variant(matrix, "cu13"), root / "templates")
    dockerfile = next(f.content for f in files if f.path.name == "Dockerfile")
    assert "from https://download.pytorch.org/whl/cu130 alone" in dockerfile
    assert "pypi.org" not in dockerfile.split("FROM system AS packages\n")[1]
    requirements = next(f.content for f in files if f.path.name == "requirements.txt")
    assert "nvidia-nccl-cu13==2.27.7" in requirements
    assert "torch==2.9.1+cu130\n" in requirements


def test_tritons_cupti_copies_become_links_in_the_torch_layer(root: Path) -> None:
    dockerfile = (root / "images/cu128-runtime/Dockerfile").read_text()
    torch_layer = dockerfile.split("# Layer 2:")[1].split("# Layer 3:")[0]
    assert 'cmp -s "$f" "$same"' in torch_layer  # only byte-identical files are replaced
    assert "ln -sf" in torch_layer


def test_layer_order_puts_the_bulk_first(root: Path) -> None:
    dockerfile = (root / "images/cu128-runtime/Dockerfile").read_text()
    order = [dockerfile.index(f"-r /tmp/layer-{n}") for n in ("1-nvidia", "2-torch", "3-python")]
    assert order == sorted(order)
    assert dockerfile.index("-r /tmp/layer-3-python") < dockerfile.index("cp -R /tmp/src/conformance")


def test_variants_share_one_template(root: Path) -> None:
    runtime = (root / "templates/runtime.Dockerfile.j2").read_text()
    assert '{% extends "base.Dockerfile.j2" %}' in runtime
    assert "FROM" not in runtime


def test_the_commands_are_rendered_once_and_every_root_dockerfile_installs_them(matrix: Matrix, root: Path) -> None:
    """The commands are the same bytes for every variant: one file each under images/bin/, no copies. Each is
    installed by a RUN from the bind-mounted images/bin/ (mode 0755 whatever the checkout's), but clamp-mtimes and
    compile-bytecode, which RUNs bind-mount and which no layer holds."""
    files = render_all(matrix, root / "templates")
    commands = [f for f in files if f.path.name in COMMANDS]
    assert sorted(str(f.path) for f in commands) == sorted(str(COMMANDS_DIR / name) for name in COMMANDS)
    assert all(f.executable for f in commands)
    assert len({f.path for f in files}) == len(files)
    roots = [f for f in files if f.path.name == "Dockerfile" and f.path.parent.name.endswith("-runtime")]
    assert len(roots) == 3
    for dockerfile in roots:
        assert "--mount=type=bind,source=images/bin,target=/tmp/src/bin" in dockerfile.content
        for name in set(COMMANDS) - BUILD_ONLY_COMMANDS:
            assert f"install -m 0755 /tmp/src/bin/{name} /usr/local/bin/" in dockerfile.content, name
        for name in BUILD_ONLY_COMMANDS:
            assert f"{name} /usr/local/bin" not in dockerfile.content
            assert f"source=images/bin/{name},target=/tmp/{name}" in dockerfile.content
        # still the variant's own manifest
        assert f"source={dockerfile.path.parent}/manifest.json,target=/tmp/src/manifest.json" in dockerfile.content


def test_render_removes_a_file_it_no_longer_renders_and_keeps_the_locks(
    matrix: Matrix, root: Path, tmp_path: Path
) -> None:
    copy = _copy_repo(root, tmp_path)
    old = copy / "images/cu128-runtime/conformance"  # where each variant had its own copy of a command
    old.write_text("#!/bin/sh\n")
    stale = find_stale(render_all(matrix, copy / "templates"), copy)
    assert [(s.path, s.reason) for s in stale] == [(old.relative_to(copy), "not rendered from the matrix (left over)")]
    changed = write_rendered(render_all(matrix, copy / "templates"), copy)
    assert changed == [old.relative_to(copy)]
    assert not old.exists()
    assert (copy / "images/cu128-runtime/requirements.lock").exists()
    assert (copy / "images/installer.lock").exists()
    assert find_stale(render_all(matrix, copy / "templates"), copy) == []


def test_every_rendered_file_says_it_is_generated(matrix: Matrix, root: Path) -> None:
    """Each file but JSON (no comments there; .gitattributes marks images/ generated) opens with a header naming
    what made it; a shell command's header follows its #! line."""
    files = render_all(matrix, root / "templates")
    assert COMMANDS_DIR / "clamp-mtimes" in {file.path for file in files}
    for file in files:
        if file.path.suffix == ".json":
            continue
        lines = file.content.splitlines()
        head = "\n".join(lines[1:3] if lines[0].startswith("#!") else lines[:2])
        assert head.startswith("# Generated from "), file.path
        assert "`python build.py render`" in head, file.path
        assert "Do not edit" in file.content.split("\n\n")[0], file.path


def test_gitattributes_marks_images_generated(root: Path) -> None:
    assert "images/** linguist-generated=true" in (root / ".gitattributes").read_text().splitlines()
