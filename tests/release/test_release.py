"""scripts/release: checks first, then every artifact, built from the commit.

One real build (the satellite's, protocol's and client's sdists and wheels with uv, the
integration's zip) of a repository holding the project's packages; the refusals
stop before anything is built.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
import zipfile

import pytest

from scripts import release, versions
from tests.release.repo import (
    ENTRY,
    ROOT,
    VERSION_FILES,
    commit,
    git,
    make_repo,
    run,
    tracked,
)

PACKAGES = ("satellite", "protocol", "client", "custom_components/voicestack")
VERSION = versions.version(ROOT)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A release of the project's packages at 0.1.0: the repo, its commit, stdout.

    After the commit the working tree's manifest says another version: the
    release is of the commit, so that change is in no artifact.
    """
    repo = tmp_path_factory.mktemp("repo")
    make_repo(repo, tracked(*PACKAGES))
    run(repo, "versions", "--set", "0.1.0")
    sha = commit(repo)
    manifest = repo / "custom_components/voicestack/manifest.json"
    manifest.write_text(manifest.read_text().replace('"0.1.0"', '"0.1.1"'))
    done = run(repo, "release")
    assert done.returncode == 0, done.stderr
    return repo, sha, done.stdout


def test_every_artifact_is_built_for_the_version(built: tuple[Path, str, str]) -> None:
    repo, sha, stdout = built
    out = repo / "dist/0.1.0"

    assert sorted(p.name for p in out.iterdir() if p.name != ".gitignore") == sorted(
        [*release.expected("0.1.0"), "RELEASE_NOTES.md", "SHA256SUMS"]
    )
    for name in ("voicestack_satellite", "voicestack_protocol", "voicestack_client"):
        with zipfile.ZipFile(out / f"{name}-0.1.0-py3-none-any.whl") as wheel:
            metadata = wheel.read(f"{name}-0.1.0.dist-info/METADATA").decode()
        assert "\nVersion: 0.1.0\n" in metadata
    assert f"git tag -a v0.1.0 -m 'VoiceStack 0.1.0' {sha}" in stdout
    assert (out / "RELEASE_NOTES.md").read_text() == (
        "[0.1.0] - 2026-11-28\n\n### Added\n\n- Something that works.\n"
    )
    sums = (out / "SHA256SUMS").read_text().splitlines()
    assert sums == [
        f"{hashlib.sha256((out / n).read_bytes()).hexdigest()}  {n}"
        for n in release.expected("0.1.0")
    ]


def test_the_zip_holds_the_committed_integration_at_its_root(
    built: tuple[Path, str, str],
) -> None:
    """As HACS's zip_release extracts it into custom_components/voicestack."""
    repo, _sha, _stdout = built
    prefix = "custom_components/voicestack/"
    committed = git(repo, "ls-files", "--", prefix).splitlines()

    with zipfile.ZipFile(repo / "dist/0.1.0/voicestack.zip") as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("manifest.json"))

    assert names == sorted(name.removeprefix(prefix) for name in committed)
    assert "brand/icon.png" in names
    assert not [n for n in names if "__pycache__" in n]
    assert manifest["version"] == "0.1.0"  # not the uncommitted 0.1.1


def test_the_zip_is_the_same_bytes_whatever_the_files_times(tmp_path: Path) -> None:
    folder = tmp_path / "integration"
    (folder / "brand").mkdir(parents=True)
    (folder / "manifest.json").write_text('{"version": "0.1.0"}')
    (folder / "brand/icon.png").write_bytes(b"png")

    release.zip_integration(folder, tmp_path / "first.zip", 1_764_288_000)
    os.utime(folder / "manifest.json", (0, 0))
    release.zip_integration(folder, tmp_path / "second.zip", 1_764_288_000)

    first = (tmp_path / "first.zip").read_bytes()
    assert first == (tmp_path / "second.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "first.zip") as archive:
        assert archive.namelist() == ["brand/icon.png", "manifest.json"]


def refused(repo: Path, *args: str) -> str:
    """What the release script said when it refused; nothing was built."""
    done = run(repo, "release", *args)
    assert done.returncode == 1, done.stdout
    assert not (repo / "dist").exists()
    return done.stderr


def test_versions_that_disagree_are_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES))
    client = repo / "client/pyproject.toml"
    client.write_text(client.read_text().replace('version = "', 'version = "9', 1))
    commit(repo)

    assert "the versions disagree" in refused(repo)


def test_a_version_without_its_changelog_entry_is_refused(tmp_path: Path) -> None:
    only_unreleased = "## [Unreleased]\n\n- Something.\n"
    repo = make_repo(tmp_path, list(VERSION_FILES), changelog=only_unreleased)

    assert f"CHANGELOG.md has no entry '## [{VERSION}]" in refused(repo)


def test_an_entry_that_lists_nothing_is_refused(tmp_path: Path) -> None:
    empty = f"## [{VERSION}] - 2026-11-28\n\n[{VERSION}]: https://example.com\n"
    repo = make_repo(tmp_path, list(VERSION_FILES), changelog=empty)

    assert "lists no change" in refused(repo)


def test_without_a_changelog_it_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES), changelog=None)

    assert "there is no CHANGELOG.md" in refused(repo)


def test_a_version_tagged_at_another_commit_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, list(VERSION_FILES))
    git(repo, "tag", f"v{VERSION}")
    commit(repo)  # a later commit that forgot to raise the version

    assert f"v{VERSION} is already tagged" in refused(repo)


def test_uncommitted_changes_are_not_released(tmp_path: Path) -> None:
    """The CHANGELOG entry written but not committed: the commit has none."""
    repo = make_repo(tmp_path, list(VERSION_FILES), changelog=None)
    (repo / "CHANGELOG.md").write_text(ENTRY.format(v=VERSION))

    assert "there is no CHANGELOG.md" in refused(repo)
