"""matrix.schema.json: generated from the model, committed up to date, named by matrix.yaml; key typos read well."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from pytorch_cuda import cli
from pytorch_cuda.errors import MatrixError
from pytorch_cuda.matrix.build_matrix import load_matrix
from pytorch_cuda.matrix.json_schema import SCHEMA_PATH, schema_text
from tests.support.cli_refusal import refusal


def test_the_committed_schema_is_the_generated_one(root: Path) -> None:
    assert (root / SCHEMA_PATH).read_text() == schema_text(), "run `python build.py render` and commit it"


def test_matrix_yaml_names_the_schema_and_meets_it(root: Path, matrix_text: str) -> None:
    assert matrix_text.splitlines()[0] == f"# yaml-language-server: $schema=./{SCHEMA_PATH}"
    schema = json.loads((root / SCHEMA_PATH).read_text())
    jsonschema.validate(yaml.safe_load(matrix_text), schema)
    typo = yaml.safe_load(matrix_text.replace('    cudnn: "9.10.2.21"', '    cudn: "9.10.2.21"', 1))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(typo, schema)


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        (
            '    cudnn: "9.10.2.21"',
            '    cudn: "9.10.2.21"',
            [
                "the key 'targets.cu128.cudn' is not one this file knows (did you mean 'cudnn'?)",
                "'targets.cu128.cudnn' is missing",
            ],
        ),
        ("\nuser:", "\nusr:", ["the key 'usr' is not one this file knows (did you mean 'user'?)"]),
        (
            "      variant: minbase",
            "      varaint: minbase",
            ["'bases.trixie.bootstrap.varaint'", "did you mean 'variant'"],
        ),
        (
            '    torch: "2.9.1"\n',
            '    torch: "2.9.1"\n    colour: red\n',
            ["'targets.cu128.colour' is not one this file knows (allowed here: aliases, index"],
        ),
    ],
)
def test_a_key_typo_reads_clearly(matrix_text: str, tmp_path: Path, old: str, new: str, needles: list[str]) -> None:
    path = tmp_path / "matrix.yaml"
    path.write_text(matrix_text.replace(old, new, 1))
    with pytest.raises(MatrixError) as caught:
        load_matrix(path)
    cause = caught.value.cause
    for needle in needles:
        assert needle in cause
    assert "Field required" not in cause
    assert "a mapping is invalid" not in cause


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["bul"], "invalid choice: 'bul'"),
        (["lsit"], "(did you mean 'list'?)"),
        (["list", "--jsn"], "(did you mean '--json'?)"),
        (["build", "--target", "cu12", "--progress", "plian"], "(did you mean 'plain'?)"),
    ],
)
def test_a_mistyped_verb_or_option_gets_did_you_mean(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refusal(argv, capsys)
    assert needle in err
    assert "did you mean" in err


def test_a_mistyped_target_or_flavour_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["build", "--target", "cu1280", "--dry-run"]) == 2
    assert "(did you mean 'cu128'?)" in " ".join(capsys.readouterr().err.split())
    assert cli.main(["build", "--target", "cu12", "--flavour", "jupiter", "--dry-run"]) == 2
    assert "(did you mean 'jupyter'?)" in " ".join(capsys.readouterr().err.split())
