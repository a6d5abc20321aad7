from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_cuda.errors import MatrixError
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "matrix.yaml"
    path.write_text(text)
    return path


def _torch_pin(torch: str, target: str) -> str:
    """A target's torch pin as matrix.yaml writes it, told apart from the others' by its local_version line."""
    return f'torch: "{torch}"\n    local_version: {target}'


def test_committed_matrix_has_the_issue_pins(matrix: Matrix) -> None:
    cu128 = matrix.targets["cu128"]
    assert (cu128.torch, cu128.cuda, cu128.cudnn, cu128.nccl, cu128.triton) == (
        "2.9.1",
        "12.8",
        "9.10.2.21",
        "2.27.5",
        "3.5.1",
    )
    assert str(cu128.index).rstrip("/") == "https://pypi.org/simple"
    assert matrix.target_names()["cu12"] == "cu128"
    assert matrix.target_names()["default"] == "cu128"
    assert matrix.target_names()["cu13"] == "cu130"
    assert set(matrix.targets) == {"cu126", "cu128", "cu130"}
    assert matrix.bases[matrix.default_base].bootstrap.suite == "trixie"


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(MatrixError, match=r"does not exist") as info:
        load_matrix(tmp_path / "nope.yaml")
    assert "--matrix" in info.value.fix


def test_bad_yaml_names_line(tmp_path: Path) -> None:
    with pytest.raises(MatrixError, match=r"not valid YAML at line 3"):
        load_matrix(_write(tmp_path, "schema: 1\nproject: [unclosed\n"))


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path: Path, matrix_text: str) -> None:
    """Before: PyYAML kept the last of two top-level `schema:` keys and `list` passed; YAML 1.2 wants keys unique."""
    first = matrix_text.splitlines().index("schema: 1") + 1
    twice = matrix_text + "schema: 1\n"
    with pytest.raises(MatrixError, match=rf"key 'schema' is given twice in one mapping \(first at line {first}\)"):
        load_matrix(_write(tmp_path, twice))
    nested = matrix_text.replace("\nproject:\n", "\nproject:\n  extra: 1\n  extra: 2\n", 1)
    with pytest.raises(MatrixError, match=r"key 'extra' is given twice"):
        load_matrix(_write(tmp_path, nested))


def test_unknown_schema(tmp_path: Path, matrix_text: str) -> None:
    with pytest.raises(MatrixError, match=r"key 'schema'.*value 7.*allowed: 1"):
        load_matrix(_write(tmp_path, matrix_text.replace("schema: 1", "schema: 7")))


@pytest.mark.parametrize(
    ("old", "new", "key", "value"),
    [
        (_torch_pin("2.9.1", "cu128"), _torch_pin("two", "cu128"), "targets.cu128.torch", "'two'"),
        ('cuda: "12.8"', 'cuda: "12"', "targets.cu128.cuda", "'12'"),
        ("local_version: cu128", "local_version: cu129", "targets.cu128", "local_version"),
        ("wheel_family: cu13", "wheel_family: cu14", "targets.cu130.wheel_family", "'cu14'"),
        (_torch_pin("2.9.1", "cu126"), _torch_pin("2.8.0", "cu126"), "targets.cu126", "2.9"),
        ("default_target: cu128", "default_target: cu999", "(top level)", "cu999"),
        ("aliases: [cu13]", "aliases: [cu12]", "(top level)", "cu12"),
        ("image: pytorch-cuda-base/debian:trixie", "image: debian:trixie", "bases.trixie", "Docker Hub"),
        ("variant: minbase", "variant: tiny", "bases.trixie.bootstrap.variant", "'tiny'"),
        ("uid: 1000", "uid: 0", "user.uid", "0"),
    ],
)
def test_invalid_values_name_key_value_and_rule(  # noqa: PLR0917 - parametrized
    tmp_path: Path, matrix_text: str, old: str, new: str, key: str, value: str
) -> None:
    assert old in matrix_text, old
    with pytest.raises(MatrixError) as info:
        load_matrix(_write(tmp_path, matrix_text.replace(old, new, 1)))
    paragraph = info.value.paragraph(width=10_000)
    assert str(tmp_path / "matrix.yaml") in paragraph
    assert f"key '{key}'" in paragraph
    assert value in paragraph


def test_unknown_key_is_rejected(tmp_path: Path, matrix_text: str) -> None:
    with pytest.raises(MatrixError, match=r"targets.cu128.cudaa"):
        load_matrix(_write(tmp_path, matrix_text.replace('cuda: "12.8"', 'cuda: "12.8"\n    cudaa: "x"', 1)))


def test_matrix_objects_are_frozen(matrix: Matrix) -> None:
    with pytest.raises(Exception, match="frozen"):
        matrix.targets["cu128"].torch = "2.9.0"
