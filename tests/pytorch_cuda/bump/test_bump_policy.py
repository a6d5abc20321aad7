"""The policy section of matrix.yaml: what each rule admits, and a bad one's one-paragraph error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from packaging.version import Version

from pytorch_cuda.bump.bump_policy import BumpPolicyError, Rule, parse_policy
from pytorch_cuda.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


def _admits(rule: Rule, current: str, candidate: str) -> bool:
    return rule.allowed(Version(current)).contains(candidate)


def test_the_committed_policy() -> None:
    import yaml

    policy = parse_policy(yaml.safe_load((ROOT / "matrix.yaml").read_text())["policy"])
    assert policy.torch.kind == "specifier"
    assert _admits(policy.torch, "2.9.1", "2.9.2")
    assert not _admits(policy.torch, "2.9.1", "2.10.0")
    assert policy.rule_for("numpy").kind == "compatible"


def test_compatible_is_the_same_major_or_the_same_minor_below_one() -> None:
    rule = Rule("compatible")
    assert _admits(rule, "2.5.5", "2.6.0")
    assert not _admits(rule, "2.5.5", "3.0.0")
    assert not _admits(rule, "2.5.5", "2.5.4")  # never backwards
    assert _admits(rule, "0.11.0", "0.11.3")
    assert not _admits(rule, "0.11.0", "0.12.0")


def test_patch_and_pinned() -> None:
    assert _admits(Rule("patch"), "13.615.71", "13.615.80")
    assert not _admits(Rule("patch"), "13.615.71", "13.616.0")
    assert not _admits(Rule("pinned"), "9.2.0", "9.2.1")


def test_defaults_and_overrides() -> None:
    default = parse_policy(None)
    assert (default.torch.kind, default.python_packages.kind) == ("patch", "compatible")
    policy = parse_policy({"torch": ">=2.9.1,<2.10", "packages": {"pytest": "pinned", "numpy": "~=2.5.0"}})
    assert policy.rule_for("pytest").kind == "pinned"
    assert _admits(policy.rule_for("numpy"), "2.5.5", "2.5.9")
    assert not _admits(policy.rule_for("numpy"), "2.5.5", "2.6.0")
    assert policy.rule_for("jupyterlab").kind == "compatible"


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ("2.9.*", "not a mapping"),
        ({"torhc": "2.9.*"}, "unknown key(s) torhc"),
        ({"torch": "2.9.x"}, "'2.9.x', neither"),
        ({"torch": 2.9}, "torch is 2.9, not a rule"),
        ({"python_packages": "sometimes"}, "'sometimes', neither"),
        ({"packages": ["numpy"]}, "not a mapping of package name"),
        ({"packages": {"numpy": ""}}, "packages.numpy is ''"),
    ],
)
def test_a_bad_policy_is_one_paragraph(section: object, named: str) -> None:
    with pytest.raises(BumpPolicyError) as caught:
        parse_policy(section)
    assert named in caught.value.cause
    assert "docs/bump.md" in caught.value.fix


def test_bump_with_a_bad_policy_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    text = (ROOT / "matrix.yaml").read_text().replace('torch: "2.9.*"', 'torch: "newest"')
    (tmp_path / "matrix.yaml").write_text(text)
    assert main(["bump", "--dry-run", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "policy section is invalid: torch is 'newest'" in err
    assert "Fix:" in err
