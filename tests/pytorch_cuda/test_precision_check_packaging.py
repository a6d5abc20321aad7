"""precision_check ships in the image: standard library + torch only, a rendered wrapper, COPY lines."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.variants import all_variants
from pytorch_cuda.render import render_variant
from pytorch_cuda_contract import paths

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "precision_check"


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_package_imports_only_the_standard_library_torch_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"torch", "precision_check", "pytorch_cuda_contract", "__future__"}
    for path in sorted(PACKAGE.glob("*.py")):
        assert _imported_roots(path) <= allowed, path.name
    assert all(len(p.read_text().splitlines()) < 250 for p in PACKAGE.glob("*.py"))


def test_every_root_variant_renders_an_executable_wrapper_and_installs_the_package() -> None:
    """Root flavours carry it; child flavours (jupyter, devel) are built FROM a root image that has it."""
    matrix = load_matrix(ROOT / "matrix.yaml")
    roots = [variant for variant in all_variants(matrix) if variant.flavour.parent is None]
    assert roots
    for variant in roots:
        files = {f.path.name: f for f in render_variant(matrix, variant, ROOT / "templates")}
        wrapper = files["precision-check"]
        assert wrapper.executable
        assert f'PYTHONPATH="{paths.SHARE_DIR}' in wrapper.content
        assert '/bin/python -m precision_check "$@"' in wrapper.content
        dockerfile = files["Dockerfile"].content
        # by a RUN from bind mounts of the checkout (modes and times fixed: reproducible layers), not COPY
        assert "--mount=type=bind,source=precision_check,target=/tmp/src/precision_check" in dockerfile
        assert "--mount=type=bind,source=examples,target=/tmp/src/examples" in dockerfile
        assert "install -m 0755 /tmp/src/bin/precision-check /usr/local/bin/precision-check" in dockerfile
        assert f"cp -R /tmp/src/precision_check {paths.PRECISION_CHECK_DIR} \\" in dockerfile
        assert f"cp -R /tmp/src/examples/precision_check {paths.PRECISION_CHECK_EXAMPLES_DIR} \\" in dockerfile
    assert f"{paths.SHARE_DIR}/precision_check" == paths.PRECISION_CHECK_DIR


def test_dockerignore_lets_the_package_and_examples_into_the_build_context() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert "!precision_check/" in lines
    assert "!examples/precision_check/" in lines
