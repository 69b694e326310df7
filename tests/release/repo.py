"""A throwaway git repository holding what the release scripts read, to run them in.

The scripts run on the host (they need git), as ``python -m scripts.<name>`` from
the repository root, exactly as their bash wrappers run them.
"""

from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess
import sys

from scripts import versions

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("scripts/__init__.py", "scripts/versions.py", "scripts/release.py")
VERSION_FILES = (
    "custom_components/voicestack/manifest.json",
    "satellite/pyproject.toml",
    "satellite/voicestack_satellite/__init__.py",
    "protocol/pyproject.toml",
    "client/pyproject.toml",
)
ENTRY = "## [{v}] - 2026-11-28\n\n### Added\n\n- Something that works.\n"
CURRENT_ENTRY = ENTRY.format(v=versions.version(ROOT))  # the project's version
GIT = shutil.which("git") or "git"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def tracked(*paths: str) -> list[str]:
    """The repository's tracked files under ``paths`` (no caches, no build output)."""
    return git(ROOT, "ls-files", "--", *paths).splitlines()


def make_repo(
    path: Path, files: list[str], changelog: str | None = CURRENT_ENTRY
) -> Path:
    """A repository of ``files`` and the scripts, committed.

    The files are as they are in the working tree; ``changelog`` is its
    CHANGELOG.md (None: there is none).
    """
    for name in [*files, *SCRIPTS]:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, path / name)
    if changelog is not None:
        (path / "CHANGELOG.md").write_text(f"# Changelog\n\n{changelog}")
    git(path, "init", "-q")
    commit(path)
    return path


def commit(repo: Path) -> str:
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    return git(repo, "rev-parse", "HEAD")


def run(repo: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``scripts/<script> args`` in ``repo``, with the uv scripts/setup keeps on PATH."""
    uv = [str(p) for p in sorted(ROOT.glob(".cache/uv-*/bin"))[-1:]]
    return subprocess.run(
        [sys.executable, "-m", f"scripts.{script}", *args],
        cwd=repo,
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": os.pathsep.join([*uv, os.environ["PATH"]])},
    )
