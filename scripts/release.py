"""Build one VoiceStack release from a commit: checked, then every artifact.

What is released is what is committed: the commit (HEAD unless ``--ref``) is
exported with ``git archive`` and everything is built from that export, so
changes not committed never reach an artifact. Before building, the five
version files must agree (scripts/versions.py), CHANGELOG.md must have an entry
for the version, and the tag ``vX.Y.Z`` must not name another commit.

Artifacts, in ``dist/X.Y.Z/`` unless ``--out``:

- voicestack-protocol's, the satellite's and voicestack-client's sdists and
  wheels (``uv build``: the sdist first, the wheel from the sdist, so the sdist
  is known complete); voicestack-protocol goes to PyPI before the GitHub
  release, since the integration's manifest and the satellite require it;
- ``voicestack.zip``: the integration's files at the zip's root, the layout
  HACS's ``zip_release`` extracts into ``custom_components/voicestack`` (and a
  manual install unzips there);
- ``RELEASE_NOTES.md`` (the CHANGELOG entry) and ``SHA256SUMS``.

It creates no tag: it prints the command that tags the commit it built.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import hashlib
import io
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile

from scripts import versions

ROOT = versions.ROOT
INTEGRATION = "custom_components/voicestack"
ZIP_NAME = "voicestack.zip"
# The Python packages released with the integration: folder, distribution name.
PACKAGES = (
    ("protocol", "voicestack_protocol"),
    ("satellite", "voicestack_satellite"),
    ("client", "voicestack_client"),
)
NOTES = "RELEASE_NOTES.md"
SUMS = "SHA256SUMS"


class ReleaseError(Exception):
    """A check failed or a step could not be done; nothing is to be tagged."""


@dataclass(frozen=True)
class Release:
    """What was built: the version, the commit, the artifacts."""

    version: str
    commit: str
    out: Path
    artifacts: tuple[Path, ...]

    @property
    def tag(self) -> str:
        """The tag this release gets."""
        return f"v{self.version}"


def git_command(root: Path, *args: str) -> list[str]:
    """The command line of ``git args`` in ``root``."""
    found = shutil.which("git")
    if found is None:
        raise ReleaseError("git is not installed")
    return [found, "-C", str(root), *args]


def git(root: Path, *args: str) -> str:
    """``git args`` in ``root``; its output, stripped."""
    try:
        done = subprocess.run(
            git_command(root, *args), check=True, capture_output=True, text=True
        )
    except subprocess.CalledProcessError as err:
        raise ReleaseError(f"git {' '.join(args)}: {err.stderr.strip()}") from err
    return done.stdout.strip()


def export(root: Path, commit: str, into: Path) -> None:
    """The files of ``commit`` (only what git tracks) into ``into``."""
    archive = subprocess.run(
        git_command(root, "archive", "--format=tar", commit),
        check=False,
        capture_output=True,
    )
    if archive.returncode != 0:
        raise ReleaseError(f"git archive {commit}: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")


def changelog_entry(changelog: Path, version: str) -> str:
    """The CHANGELOG's entry for ``version`` (``## [X.Y.Z] - YYYY-MM-DD``)."""
    if not changelog.exists():
        raise ReleaseError("there is no CHANGELOG.md")
    text = changelog.read_text(encoding="utf-8")
    heading = re.compile(
        rf"(?m)^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}[ \t]*$"
    )
    match = heading.search(text)
    if match is None:
        raise ReleaseError(
            f"CHANGELOG.md has no entry '## [{version}] - YYYY-MM-DD': "
            "move what is under [Unreleased] into one"
        )
    rest = text[match.end() :]
    following = re.search(r"(?m)^## ", rest)
    body = rest[: following.start() if following else len(rest)]
    body = re.sub(r"(?m)^\[[^\]]+\]: \S+\s*$", "", body).strip()
    if not re.search(r"(?m)^- \S", body):
        raise ReleaseError(f"CHANGELOG.md's entry for {version} lists no change")
    return f"{match.group(0).removeprefix('## ')}\n\n{body}\n"


def check_tag(root: Path, tag: str, commit: str) -> None:
    """Refuse a version whose tag already names another commit."""
    try:
        tagged = git(root, "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}")
    except ReleaseError:
        return  # not tagged yet
    if tagged != commit:
        raise ReleaseError(
            f"{tag} is already tagged, at {tagged[:12]}: set a new version "
            "(scripts/version --set X.Y.Z) and add its CHANGELOG entry"
        )


def find_uv(root: Path) -> str:
    """uv: on PATH, or the one scripts/setup keeps under .cache/."""
    kept = sorted(root.glob(".cache/uv-*/bin/uv"))
    found = shutil.which("uv") or (str(kept[-1]) if kept else None)
    if found is None:
        raise ReleaseError("uv not found: run scripts/setup (it keeps one in .cache/)")
    return found


def build_packages(uv: str, tree: Path, out: Path, epoch: int) -> None:
    """Each package's sdist, then its wheel from that sdist, into ``out``."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    for folder, _name in PACKAGES:
        done = subprocess.run(
            [uv, "build", "--quiet", "--out-dir", str(out), str(tree / folder)],
            check=False,
            capture_output=True,
            text=True,
            env=env,
        )
        if done.returncode != 0:
            raise ReleaseError(f"uv build {folder} failed:\n{done.stderr.strip()}")


def zip_integration(folder: Path, target: Path, epoch: int) -> None:
    """The integration's files at the zip's root, in a reproducible order and time."""
    stamp = max(epoch, 315532800)  # a zip cannot say earlier than 1980
    when = time.gmtime(stamp)[:6]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), when)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def expected(version: str) -> tuple[str, ...]:
    """The artifact names a release of ``version`` has."""
    names = [ZIP_NAME]
    for _folder, name in PACKAGES:
        names += [f"{name}-{version}.tar.gz", f"{name}-{version}-py3-none-any.whl"]
    return tuple(names)


def check_artifacts(out: Path, version: str) -> tuple[Path, ...]:
    """Every artifact there, named for ``version``; the zip as HACS extracts it."""
    paths = tuple(out / name for name in expected(version))
    missing = [p.name for p in paths if not p.exists()]
    if missing:
        built = sorted(p.name for p in out.iterdir())
        raise ReleaseError(f"not built: {', '.join(missing)} (built: {built})")
    with zipfile.ZipFile(out / ZIP_NAME) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    if manifest["version"] != version:
        raise ReleaseError(f"{ZIP_NAME}'s manifest says {manifest['version']}")
    return paths


def release(root: Path, ref: str, out: Path | None) -> Release:
    """Check and build the release of ``ref``."""
    commit = git(root, "rev-parse", "--verify", f"{ref}^{{commit}}")
    epoch = int(git(root, "show", "-s", "--format=%ct", commit))
    with tempfile.TemporaryDirectory(prefix="voicestack-release-") as tmp:
        tree = Path(tmp)
        export(root, commit, tree)
        try:
            version = versions.version(tree)
        except versions.VersionError as err:
            raise ReleaseError(str(err)) from err
        notes = changelog_entry(tree / "CHANGELOG.md", version)
        check_tag(root, f"v{version}", commit)
        uv = find_uv(root)
        out = out or root / "dist" / version
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        build_packages(uv, tree, out, epoch)
        zip_integration(tree / INTEGRATION, out / ZIP_NAME, epoch)
    artifacts = check_artifacts(out, version)
    (out / NOTES).write_text(notes, encoding="utf-8")
    sums = "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in artifacts
    )
    (out / SUMS).write_text(sums, encoding="utf-8")
    return Release(version, commit, out, artifacts)


def main(argv: list[str] | None = None) -> int:
    """Build the release; print its artifacts and the tag command."""
    parser = argparse.ArgumentParser(
        prog="scripts/release",
        description="Check the versions and the CHANGELOG, then build the "
        "satellite's and the client's sdists and wheels and the integration's "
        "zip from a commit. Creates no tag.",
    )
    parser.add_argument("--ref", default="HEAD", help="what to release (HEAD)")
    parser.add_argument("--out", type=Path, help="where (dist/X.Y.Z)")
    args = parser.parse_args(argv)
    try:
        built = release(ROOT, args.ref, args.out)
    except ReleaseError as err:
        print(f"scripts/release: {err}", file=sys.stderr)
        return 1
    print(f"VoiceStack {built.version} from {built.commit[:12]}, in {built.out}:")
    for path in built.artifacts:
        print(f"  {path.stat().st_size:>9,} B  {path.name}")
    print(
        "Tag it (annotated), then push the tag and publish a GitHub release of it"
        f" with these files and {NOTES} (HACS shows versions of releases):\n"
        f"  git tag -a {built.tag} -m 'VoiceStack {built.version}' {built.commit}\n"
        f"  git push origin {built.tag}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
