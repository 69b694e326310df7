"""scripts/version: one version in five files, checked and set together."""

from __future__ import annotations

from pathlib import Path

from scripts import versions
from tests.release.repo import ROOT, VERSION_FILES, make_repo, run


def test_the_repository_has_one_semantic_version() -> None:
    found = versions.versions(ROOT)

    assert sorted(found) == sorted(VERSION_FILES)
    assert len(set(found.values())) == 1
    assert versions.SEMVER.fullmatch(versions.version(ROOT))


def test_it_prints_the_version(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES))

    done = run(repo, "versions")

    assert (done.returncode, done.stdout) == (0, f"{versions.version(ROOT)}\n")


def test_set_rewrites_only_the_version_in_every_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES))
    before = {name: (repo / name).read_text() for name in VERSION_FILES}
    old = versions.version(repo)

    done = run(repo, "versions", "--set", "1.2.3")

    assert (done.returncode, done.stdout) == (0, "1.2.3\n")
    assert versions.versions(repo) == dict.fromkeys(VERSION_FILES, "1.2.3")
    for name, text in before.items():
        expected = text.replace(f'"{old}"', '"1.2.3"', 1).replace(
            f'"voicestack-protocol=={old}"', '"voicestack-protocol==1.2.3"'
        )
        assert (repo / name).read_text() == expected, name


def test_files_that_disagree_are_named_and_fail(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES))
    client = repo / "client/pyproject.toml"
    client.write_text(client.read_text().replace('version = "', 'version = "9', 1))

    done = run(repo, "versions")

    assert done.returncode == 1
    assert "the versions disagree" in done.stderr
    assert "client/pyproject.toml" in done.stderr
    assert "satellite/voicestack_satellite/__init__.py" in done.stderr


def test_a_version_that_is_not_semantic_changes_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES))
    before = {name: (repo / name).read_text() for name in VERSION_FILES}

    for bad in ("1.2", "1.2.3rc1", "01.2.3", "v1.2.3", "1.2.3-beta"):
        done = run(repo, "versions", "--set", bad)
        assert done.returncode == 1, bad
        assert "not a semantic version" in done.stderr

    assert {name: (repo / name).read_text() for name in VERSION_FILES} == before
