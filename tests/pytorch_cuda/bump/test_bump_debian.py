"""Debian's archive against the recorded packages: Debian version order (epochs, ~, +debNuM), the newest of
the suite, -updates and -security, security named first, other architectures ignored; the record's format;
the bootstrap's sources carry -updates and -security."""

from __future__ import annotations

import lzma
from pathlib import Path

import pytest

from pytorch_cuda.bump.debian_archive import check_archive, check_bases, newest, updates
from pytorch_cuda.errors import EngineError
from pytorch_cuda.locks.debian_record import (
    DebianRecord,
    DebianRecordError,
    format_record,
    is_debian_record,
    parse_record,
)
from pytorch_cuda.matrix.build_matrix import Matrix, load_matrix
from pytorch_cuda.matrix.debian_suites import base_suites, deb_lines
from pytorch_cuda.steps.base_image import bootstrap_command
from tests.support.loopback_debian import packages_index

ROOT = Path(__file__).resolve().parents[3]
BOOTSTRAP = load_matrix(ROOT / "matrix.yaml").bases["trixie"].bootstrap
MAIN, UPDATES, SECURITY = base_suites(BOOTSTRAP)
INSTALLED = {"passwd": "1:4.17.4-2", "libzstd1": "1.5.7+dfsg-1", "tzdata": "2025b-4", "gcc-14": "14.2.0-19"}


def _index(packages: dict[str, str], architecture: str = "amd64") -> dict[str, object]:
    return dict(newest(lzma.compress(packages_index(packages, architecture)), INSTALLED))


def test_debian_order_and_the_suite_that_offers_the_newest() -> None:
    archive = {
        MAIN: newest(packages_index({"passwd": "1:4.17.4-2", "gcc-14": "14.2.0-19", "tzdata": "2025b-4"}), INSTALLED),
        UPDATES: newest(packages_index({"tzdata": "2025c-0+deb13u1"}), INSTALLED),
        # without its epoch 4.17.4-3 sorts below 1:4.17.4-2; ~ sorts before the release it precedes
        SECURITY: newest(
            packages_index(
                {"passwd": "1:4.17.4-2+deb13u1", "libzstd1": "1.5.7+dfsg-1+deb13u1", "gcc-14": "14.2.0-19~1"}
            ),
            INSTALLED,
        ),
    }
    found = {u.package: (u.old, u.new, u.suite, u.security) for u in updates(INSTALLED, archive)}
    assert found == {
        "passwd": ("1:4.17.4-2", "1:4.17.4-2+deb13u1", "trixie-security", True),
        "libzstd1": ("1.5.7+dfsg-1", "1.5.7+dfsg-1+deb13u1", "trixie-security", True),
        "tzdata": ("2025b-4", "2025c-0+deb13u1", "trixie-updates", False),
    }
    lines = [u.line for u in updates(INSTALLED, archive)]
    assert "rebuild: Debian security update passwd 1:4.17.4-2 -> 1:4.17.4-2+deb13u1" in lines
    assert "rebuild: Debian update (trixie-updates) tzdata 2025b-4 -> 2025c-0+deb13u1" in lines


def test_an_older_or_foreign_version_is_no_update() -> None:
    assert _index({"passwd": "4.17.4-3"})["passwd"] is not None  # read, but 4.17.4-3 < 1:4.17.4-2 (epoch)
    archive = {MAIN: newest(packages_index({"passwd": "4.17.4-3"}), INSTALLED)}
    assert updates(INSTALLED, archive) == []
    assert _index({"libzstd1": "9.9"}, architecture="i386") == {}  # not an amd64 or all package


def test_security_is_named_when_it_has_the_same_newest_version_as_the_point_release() -> None:
    same = {"libzstd1": "1.5.7+dfsg-1+deb13u1"}
    archive = {MAIN: newest(packages_index(same), INSTALLED), SECURITY: newest(packages_index(same), INSTALLED)}
    assert [(u.suite, u.security) for u in updates(INSTALLED, archive)] == [("trixie-security", True)]


def test_check_archive_reads_the_three_suites_and_refuses_what_is_no_index() -> None:
    record = DebianRecord("trixie", INSTALLED)
    served = {
        "http://deb.debian.org/debian/dists/trixie/main/binary-amd64/Packages.xz": packages_index(INSTALLED),
        "http://deb.debian.org/debian/dists/trixie-updates/main/binary-amd64/Packages.xz": b"",
        "http://deb.debian.org/debian-security/dists/trixie-security/main/binary-amd64/Packages.xz": lzma.compress(
            packages_index({"libzstd1": "1.5.7+dfsg-1+deb13u1"})
        ),
    }
    assert [u.package for u in check_archive(record, BOOTSTRAP, served.__getitem__)] == ["libzstd1"]
    with pytest.raises(EngineError, match="is not a Debian Packages index"):
        check_archive(record, BOOTSTRAP, lambda url: b"\xfd7zXZ\x00 not xz")


def test_check_bases_reads_each_recorded_base_once_logged_and_notes_an_unrecorded_one(
    matrix: Matrix, tmp_path: Path
) -> None:
    """bump's plan and audit's findings walk the bases alike: one base at a time, its line logged before its
    archive is read; a base with no committed record is named, and its archive never asked."""
    twin = matrix.model_copy(update={"bases": {"trixie": matrix.bases["trixie"], "bookworm": matrix.bases["trixie"]}})
    (tmp_path / "images").mkdir()
    (tmp_path / "images/debian-trixie.lock").write_text("".join(f"{n} {v}\n" for n, v in INSTALLED.items()))
    security = lzma.compress(packages_index({"libzstd1": "1.5.7+dfsg-1+deb13u1"}))
    said: list[str] = []

    def fetch(url: str) -> bytes:
        said.append(f"fetch {url.split('/dists/')[1].split('/', maxsplit=1)[0]}")
        return security if "-security/" in url else packages_index(INSTALLED)

    checks = check_bases(twin, tmp_path, fetch, said.append, against="-security")
    first = next(checks)
    assert (first.name, first.where, first.packages) == ("trixie", "images/debian-trixie.lock", len(INSTALLED))
    assert [(u.package, u.security) for u in first.updates or ()] == [("libzstd1", True)]
    assert said == [
        f"base trixie: {len(INSTALLED)} Debian packages against {BOOTSTRAP.mirror}-security",
        "fetch trixie",
        "fetch trixie-updates",
        "fetch trixie-security",
    ]
    unrecorded = next(checks)
    assert (unrecorded.name, unrecorded.where, unrecorded.packages) == ("bookworm", "images/debian-bookworm.lock", 0)
    assert unrecorded.updates is None
    assert len(said) == 4  # nothing logged or fetched for it
    assert next(checks, None) is None


def test_the_record_round_trips_and_a_bad_line_is_one_paragraph() -> None:
    text = format_record("trixie", "pytorch-cuda:v2.9", "sha256:" + "1" * 64, INSTALLED)
    assert text.startswith("# The Debian packages")
    assert parse_record(text, "images/debian-trixie.lock", "trixie").packages == INSTALLED
    with pytest.raises(DebianRecordError, match="line 2 is 'passwd'"):
        parse_record("apt 3.0.4\npasswd\n", "images/debian-trixie.lock", "trixie")
    assert is_debian_record(Path("images/debian-trixie.lock"))
    assert not is_debian_record(Path("images/cu128-runtime/debian-trixie.lock"))


def test_the_bootstrap_adds_updates_and_security_to_its_mirror(tmp_path: Path) -> None:
    argv = bootstrap_command(load_matrix(ROOT / "matrix.yaml").bases["trixie"], tmp_path / "x.tar")
    assert argv[-3:] == ["http://deb.debian.org/debian", *deb_lines(BOOTSTRAP)]
    assert deb_lines(BOOTSTRAP) == [
        "deb http://deb.debian.org/debian trixie-updates main",
        "deb http://deb.debian.org/debian-security trixie-security main",
    ]
