"""matrix.yaml's `policy:` is a closed object: a mistyped key or a wrong type is refused, with the key it may
have meant, by `list` and `render --check` (every command that reads the matrix) and by the editor's schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from pytorch_cuda import cli
from pytorch_cuda.bump.bump_policy import parse_policy
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.json_schema import SCHEMA_PATH

AGE = "  min_release_age: 7\n"


def _checkout(root: Path, tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the repository's matrix and templates, with one edit to matrix.yaml."""
    for name in ("templates", "images"):
        shutil.copytree(root / name, tmp_path / name)
    shutil.copy(root / SCHEMA_PATH, tmp_path / SCHEMA_PATH)
    text = (root / "matrix.yaml").read_text()
    assert old in text
    (tmp_path / "matrix.yaml").write_text(text.replace(old, new, 1))
    return tmp_path


@pytest.mark.parametrize(
    ("new", "needle"),
    [
        ("  min_release_ag: 7\n", "the key 'policy.min_release_ag' is not one this file knows (did you mean "
         "'min_release_age'?)"),
        ("  min_release_age: seven\n", "policy.min_release_age"),
        ("  min_release_age: -1\n", "policy.min_release_age"),
        ("  min_release_age: 7\n  base: floating\n", "policy.base"),
    ],
)  # fmt: skip
def test_list_and_render_check_refuse_a_bad_policy(
    root: Path, tmp_path: Path, new: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    checkout = _checkout(root, tmp_path, AGE, new)
    for verb in (["list"], ["render", "--check"]):
        capsys.readouterr()
        assert cli.main([*verb, "--root", str(checkout)]) == 2, verb
        assert needle in " ".join(capsys.readouterr().err.split()), verb


def test_the_schema_closes_policy_and_bump_reads_the_section(root: Path, matrix_text: str) -> None:
    schema = json.loads((root / SCHEMA_PATH).read_text())
    jsonschema.validate(yaml.safe_load(matrix_text), schema)
    with pytest.raises(jsonschema.ValidationError, match="min_release_ag"):
        jsonschema.validate(yaml.safe_load(matrix_text.replace(AGE, "  min_release_ag: 7\n")), schema)
    policy = parse_policy(load_matrix(root / "matrix.yaml").policy)
    assert policy.min_release_age == 7
    assert str(policy.torch.specifier) == "==2.9.*"
