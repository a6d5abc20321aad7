"""Render templates/ into images/<variant>/ (and the commands every root image ships, once, into images/bin/)
and check that images/ is up to date."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import jinja2

from pytorch_cuda.errors import UserError
from pytorch_cuda.locks.debian_record import is_debian_record
from pytorch_cuda.locks.file_format import (
    FLAVOUR_LOCK_NAME,
    INSTALLER_LOCK,
    LAYERS,
    LOCK_NAME,
    SBOM_TOOL_LOCK,
    TOOL_LOCKS,
    parse_lock,
    slice_layers,
)
from pytorch_cuda.matrix.build_matrix import Matrix
from pytorch_cuda.matrix.flavours import child_manifest_json, flavour_requirements_txt, parent_ref
from pytorch_cuda.matrix.image_folders import images_dir
from pytorch_cuda.matrix.labels import static_labels
from pytorch_cuda.matrix.manifest_writer import VENV_PATH, manifest_json, requirements_txt
from pytorch_cuda.matrix.tags import full_tag
from pytorch_cuda.matrix.variants import Variant, all_variants
from pytorch_cuda.stale_file import StaleFile
from pytorch_cuda_contract import paths

# The commands a root image installs into /usr/local/bin: one file each under images/bin/, rendered from its
# template with the in-image paths alone (no variant), so every variant's Dockerfile COPYs the same bytes.
COMMANDS_DIR = Path("images") / "bin"
COMMANDS = {
    "conformance": "conformance.sh.j2",
    "precision-check": "precision-check.sh.j2",
    "entrypoint": "entrypoint.sh.j2",
    "pytorch-cuda-info": "pytorch-cuda-info.sh.j2",
    "clamp-mtimes": "clamp-mtimes.sh.j2",  # not installed: every RUN bind-mounts it (reproducible layers)
    "compile-bytecode": "compile-bytecode.py.j2",  # not installed: each install RUN bind-mounts it (the .pyc files)
}
EXECUTABLE_FILES = frozenset(COMMANDS)
BUILD_ONLY_COMMANDS = frozenset({"clamp-mtimes", "compile-bytecode"})  # bind-mounted by RUNs, in no layer


@dataclass(frozen=True)
class RenderedFile:
    path: Path  # relative to the repository root
    content: str

    @property
    def executable(self) -> bool:
        return self.path.name in EXECUTABLE_FILES


def _environment(templates_dir: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
        autoescape=False,
    )


def _context(matrix: Matrix, variant: Variant) -> dict[str, object]:
    return {
        "project": matrix.project,
        "variant": variant,
        "target": variant.target,
        "flavour": variant.flavour,
        "base": variant.base,
        "user": matrix.user,
        "venv": VENV_PATH,
        "paths": paths.template_context(),
        "commands_dir": str(COMMANDS_DIR),
        "parent_ref": parent_ref(matrix, variant),
        "index_url": str(variant.target.index).rstrip("/"),
        "lock": {
            "name": LOCK_NAME,
            "flavour": FLAVOUR_LOCK_NAME,
            "installer": str(INSTALLER_LOCK),
            "sbom_tool": str(SBOM_TOOL_LOCK),
            "layers": LAYERS,
        },
        "full_tag": full_tag(variant),
        # Every RUN of a shipped stage: /tmp is a tmpfs (mount stubs and temporary files stay out of its layer)
        # and its last command clamps the mtimes it made to SOURCE_DATE_EPOCH (images/bin/clamp-mtimes), which
        # every stage declares with matrix.yaml's fixed file time as its value.
        "reproducible": {
            "mounts": f"--mount=type=tmpfs,target=/tmp --mount=type=bind,source={COMMANDS_DIR}/clamp-mtimes,"
            "target=/tmp/clamp-mtimes",
            "clamp": "bash /tmp/clamp-mtimes",
            # after each `uv pip install`: the venv's .pyc files, the same bytes whatever the load and core count
            "compile_mount": f"--mount=type=bind,source={COMMANDS_DIR}/compile-bytecode,target=/tmp/compile-bytecode",
            "compile": "python -B /tmp/compile-bytecode",
            "epoch_arg": f"ARG SOURCE_DATE_EPOCH={matrix.project.source_date_epoch}",
        },
        "static_labels": static_labels(matrix, variant),
    }


def _render_template(env: jinja2.Environment, name: str, context: dict[str, object]) -> str:
    try:
        text = env.get_template(name).render(context)
    except jinja2.TemplateNotFound as exc:
        raise UserError(
            cause=f"template {exc.name!r} does not exist under templates/",
            fix="add the template or correct the flavour's 'template' key in matrix.yaml",
        ) from exc
    except jinja2.UndefinedError as exc:
        raise UserError(
            cause=f"template {name!r} uses an undefined value: {exc.message}",
            fix="define the value in matrix.yaml or correct the template",
        ) from exc
    except jinja2.TemplateSyntaxError as exc:
        raise UserError(
            cause=f"template {exc.filename or name} has a syntax error at line {exc.lineno}: {exc.message}",
            fix="correct the Jinja syntax there",
        ) from exc
    lines = [line.rstrip() for line in text.splitlines()]
    collapsed = [line for i, line in enumerate(lines) if line or (i > 0 and lines[i - 1])]
    return "\n".join(collapsed).strip("\n") + "\n"


def render_commands(templates_dir: Path) -> list[RenderedFile]:
    """images/bin/: the root images' commands, the same for every variant (their templates see only the paths)."""
    env = _environment(templates_dir)
    context: dict[str, object] = {"paths": paths.template_context(), "venv": VENV_PATH}
    return [
        RenderedFile(COMMANDS_DIR / name, _render_template(env, template, context))
        for name, template in COMMANDS.items()
    ]


def render_variant(
    matrix: Matrix, variant: Variant, templates_dir: Path, root: Path | None = None
) -> list[RenderedFile]:
    """The variant's rendered files (a root's with the images/bin/ commands it COPYs); with a committed lock
    (under ``root``), its layer slices too."""
    env = _environment(templates_dir)
    context = _context(matrix, variant)
    folder = Path("images") / variant.key
    if variant.flavour.parent is not None:  # a child: FROM the parent image, which has the rest
        return [
            RenderedFile(folder / "Dockerfile", _render_template(env, variant.flavour.template, context)),
            RenderedFile(folder / "manifest.json", child_manifest_json(matrix, variant)),
            RenderedFile(folder / "requirements-flavour.txt", flavour_requirements_txt(variant)),
        ]
    files = [
        RenderedFile(folder / "Dockerfile", _render_template(env, variant.flavour.template, context)),
        RenderedFile(folder / "manifest.json", manifest_json(matrix, variant)),
        RenderedFile(folder / "requirements.txt", requirements_txt(matrix, variant)),
        *render_commands(templates_dir),
    ]
    lock = (root or templates_dir.parent) / folder / LOCK_NAME
    if lock.exists():
        slices = slice_layers(parse_lock(lock.read_text(encoding="utf-8")), matrix.python_packages)
        files += [RenderedFile(folder / name, text) for name, text in slices.items()]
    return files


def render_all(matrix: Matrix, templates_dir: Path, root: Path | None = None) -> list[RenderedFile]:
    """Every variant's files, each path once (the images/bin/ commands are every root variant's)."""
    files = [file for variant in all_variants(matrix) for file in render_variant(matrix, variant, templates_dir, root)]
    return list({file.path: file for file in files}.values())


def write_rendered(files: list[RenderedFile], root: Path) -> list[Path]:
    """Write the files; remove variant folders the matrix no longer has, and files under images/ that are no
    longer rendered (locks excepted). Returns the changed paths."""
    changed: list[Path] = []
    wanted_dirs = {file.path.parent for file in files}
    wanted = {file.path for file in files}
    images_folder = images_dir(root)
    if images_folder.is_dir():
        for folder in sorted(images_folder.iterdir()):
            if folder.is_dir() and folder.relative_to(root) not in wanted_dirs:
                for child in folder.iterdir():
                    child.unlink()
                folder.rmdir()
                changed.append(folder.relative_to(root))
            elif folder.is_dir():
                for child in sorted(folder.iterdir()):
                    relative = child.relative_to(root)
                    if child.is_file() and relative not in wanted and not _is_lock(relative):
                        child.unlink()
                        changed.append(relative)
    for file in files:
        target = root / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != file.content:
            target.write_text(file.content, encoding="utf-8")
            changed.append(file.path)
        target.chmod(0o755 if file.executable else 0o644)
    return changed


def _is_lock(relative: Path) -> bool:
    """Locks are resolved by `build.py lock`, not rendered; `locking.stale_locks` checks them."""
    return relative.name in (LOCK_NAME, FLAVOUR_LOCK_NAME) or relative in TOOL_LOCKS or is_debian_record(relative)


def find_stale(files: list[RenderedFile], root: Path, *, leftovers: bool = True) -> list[StaleFile]:
    """Compare what the templates render with what images/ holds (and, with leftovers, flag extra files)."""
    stale: list[StaleFile] = []
    wanted = {file.path for file in files}
    images_folder = images_dir(root)
    if leftovers and images_folder.is_dir():
        for path in sorted(images_folder.rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and relative not in wanted and not _is_lock(relative):
                stale.append(StaleFile(relative, "not rendered from the matrix (left over)", ""))
    for file in files:
        target = root / file.path
        if not target.exists():
            stale.append(StaleFile(file.path, "missing", ""))
            continue
        current = target.read_text(encoding="utf-8")
        if current != file.content:
            diff = "".join(
                difflib.unified_diff(
                    current.splitlines(keepends=True),
                    file.content.splitlines(keepends=True),
                    fromfile=f"{file.path} (committed)",
                    tofile=f"{file.path} (rendered)",
                )
            )
            stale.append(StaleFile(file.path, "differs from the templates", diff))
        elif file.executable and not target.stat().st_mode & 0o100:
            stale.append(StaleFile(file.path, "is not executable", ""))
    return stale
