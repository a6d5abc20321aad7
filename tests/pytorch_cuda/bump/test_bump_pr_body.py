"""The bump pull request's body: release-notes links from PyPI's project_urls (a changelog first, then the
GitHub releases page, then PyPI), the partial warning, held back and waiting rows, Debian updates."""

from __future__ import annotations

from typing import Any

from pytorch_cuda.bump.pr_body import package_of, pr_body, release_notes

URLS = {
    "numpy": {"homepage": "https://numpy.org", "release notes": "https://numpy.org/doc/stable/release"},
    "torch": {"Homepage": "https://pytorch.org", "Repository": "https://github.com/pytorch/pytorch"},
    "jupyterlab": {"Changelog": "https://jupyterlab.readthedocs.io/en/stable/getting_started/changelog.html"},
}


def test_the_link_prefers_the_projects_release_notes() -> None:
    def urls(name: str) -> dict[str, str]:
        return URLS.get(name, {})

    assert release_notes("numpy", "2.5.6", urls) == "[release notes](https://numpy.org/doc/stable/release)"
    assert release_notes("torch", "2.9.2", urls) == "[GitHub releases](https://github.com/pytorch/pytorch/releases)"
    assert release_notes("nbclient", "0.11.1", urls) == "[PyPI](https://pypi.org/project/nbclient/0.11.1/)"
    assert package_of("targets.cu128.cudnn") == "nvidia-cudnn-cu12"
    assert package_of("flavours.jupyter.python_packages.jupyterlab") == "jupyterlab"


def test_the_body_of_a_partial_bump() -> None:
    plan: dict[str, Any] = {
        "result": "rebuild needed",
        "targets": [
            {"target": "cu128", "index": "https://pypi.org/simple", "checked": True, "unreachable": None},
            {
                "target": "cu130",
                "index": "https://download.pytorch.org/whl/cu130",
                "checked": False,
                "unreachable": "cannot read https://download.pytorch.org/whl/cu130/torch/",
            },
        ],
        "moved": [{"pin": "python_packages.numpy", "old": "2.5.5", "new": "2.5.6", "why": "compatible"}],
        "held_back": [{"pin": "targets.cu128.torch", "current": "2.9.1", "newest": "2.15.0"}],
        "too_new": [{"pin": "flavours.jupyter.python_packages.jupyterlab", "versions": ["4.6.7"]}],
        "debian_updates": [
            {
                "package": "passwd",
                "old": "1:4.17.4-2",
                "new": "1:4.17.4-2+deb13u1",
                "suite": "trixie-security",
                "security": True,
            }
        ],
        "notes": [],
    }
    body = pr_body(plan, lambda name: URLS.get(name, {}))
    assert "**Partial** (exit 4)" in body
    assert "- `cu130` (https://download.pytorch.org/whl/cu130): cannot read" in body
    assert (
        "| `python_packages.numpy` | 2.5.5 | **2.5.6** | compatible "
        "| [release notes](https://numpy.org/doc/stable/release) |"
    ) in body
    assert "2.9.1 (held back: 2.15.0)" in body
    assert "(waiting: 4.6.7) | younger than `policy: min_release_age`" in body
    assert "- passwd 1:4.17.4-2 -> 1:4.17.4-2+deb13u1 (trixie-security, security)" in body
    assert "<details>" not in body  # no notes
