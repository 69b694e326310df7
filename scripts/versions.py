"""VoiceStack's one version, written in five files and kept in step.

The integration (``manifest.json``, which HACS and Home Assistant read), the
satellite (its ``pyproject.toml`` and ``__version__``, which it reports to Home
Assistant as the device's software version), voicestack-protocol (the events
both speak) and voicestack-client (their ``pyproject.toml``) are released
together, so they carry one version: a satellite and an integration of the same
number speak the same protocol. The integration and the satellite require
voicestack-protocol at exactly that version (``voicestack-protocol==X.Y.Z``):
those pins are read and set with the file's own version.

``scripts/version`` prints it (and fails, naming each file's, when they
disagree); ``scripts/version --set X.Y.Z`` writes it into all five.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import json
from pathlib import Path
import re
import sys
import tomllib

ROOT = Path(__file__).resolve().parents[1]
# Semantic versioning's MAJOR.MINOR.PATCH, which is also a normalized PEP 440
# version, so the wheels carry exactly the number the manifest does.
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
_PYPROJECT_VERSION = re.compile(r'(?m)^(version\s*=\s*")([^"]*)(")')
_DUNDER_VERSION = re.compile(r'(?m)^(__version__\s*=\s*")([^"]*)(")')
_MANIFEST_VERSION = re.compile(r'(?m)^(\s*"version"\s*:\s*")([^"]*)(")')
# A requirement of voicestack-protocol, pinned to the release it ships with.
_PROTOCOL_PIN = re.compile(r'("voicestack-protocol==)([^"]*)(")')


class VersionError(Exception):
    """The versions cannot be read, disagree, or a new one is not X.Y.Z."""


@dataclass(frozen=True)
class VersionFile:
    """One place the version is written, and how to read and rewrite it there."""

    path: str  # relative to the repository
    pattern: re.Pattern[str]  # group 2 is the version
    pins_protocol: bool = False  # also requires voicestack-protocol==version

    def read(self, root: Path) -> str:
        """The version written in this file under ``root``."""
        text = (root / self.path).read_text(encoding="utf-8")
        found = self._parsed(text)
        match = self.pattern.search(text)
        if match is None or match.group(2) != found:
            raise VersionError(f"{self.path}: no version line the script can rewrite")
        if self.pins_protocol:
            pins = {pin.group(2) for pin in _PROTOCOL_PIN.finditer(text)}
            if pins != {found}:
                raise VersionError(
                    f"{self.path}: version {found} requires voicestack-protocol"
                    f" {' and '.join(sorted(pins)) or 'unpinned'}, not =={found}"
                )
        return found

    def write(self, root: Path, version: str) -> None:
        """Replace the version in this file, leaving every other byte alone."""
        file = root / self.path
        text = file.read_text(encoding="utf-8")
        new, count = self.pattern.subn(
            lambda m: f"{m.group(1)}{version}{m.group(3)}", text, count=1
        )
        if count != 1:
            raise VersionError(f"{self.path}: no version line to rewrite")
        if self.pins_protocol:
            new = _PROTOCOL_PIN.sub(lambda m: f"{m.group(1)}{version}{m.group(3)}", new)
        file.write_text(new, encoding="utf-8")

    def _parsed(self, text: str) -> str:
        """The version as the file's own format reads it (not a regular expression)."""
        try:
            if self.path.endswith(".json"):
                return str(json.loads(text)["version"])
            if self.path.endswith(".toml"):
                return str(tomllib.loads(text)["project"]["version"])
        except (KeyError, ValueError) as err:
            raise VersionError(f"{self.path}: no version ({err})") from err
        match = self.pattern.search(text)
        if match is None:
            raise VersionError(f"{self.path}: no __version__")
        return match.group(2)


FILES = (
    VersionFile(
        "custom_components/voicestack/manifest.json",
        _MANIFEST_VERSION,
        pins_protocol=True,
    ),
    VersionFile("satellite/pyproject.toml", _PYPROJECT_VERSION, pins_protocol=True),
    VersionFile("satellite/voicestack_satellite/__init__.py", _DUNDER_VERSION),
    VersionFile("protocol/pyproject.toml", _PYPROJECT_VERSION),
    VersionFile("client/pyproject.toml", _PYPROJECT_VERSION),
)


def versions(root: Path = ROOT) -> dict[str, str]:
    """Each file's version."""
    return {file.path: file.read(root) for file in FILES}


def version(root: Path = ROOT) -> str:
    """The one version, or VersionError naming each file's when they disagree."""
    found = versions(root)
    if len(set(found.values())) != 1:
        listed = "\n".join(f"  {v:<10} {path}" for path, v in found.items())
        raise VersionError(f"the versions disagree:\n{listed}")
    (only,) = set(found.values())
    if not SEMVER.fullmatch(only):
        raise VersionError(f"{only!r} is not a semantic version MAJOR.MINOR.PATCH")
    return only


def set_version(new: str, root: Path = ROOT) -> None:
    """Write ``new`` (MAJOR.MINOR.PATCH) into every file."""
    if not SEMVER.fullmatch(new):
        raise VersionError(f"{new!r} is not a semantic version MAJOR.MINOR.PATCH")
    for file in FILES:
        file.read(root)  # every file readable before any is changed
    for file in FILES:
        file.write(root, new)


def main(argv: list[str] | None = None) -> int:
    """Print the version, or set it with ``--set``."""
    parser = argparse.ArgumentParser(
        prog="scripts/version",
        description="Print VoiceStack's version (checking that "
        + ", ".join(f.path for f in FILES)
        + " agree), or set it in all of them.",
    )
    parser.add_argument("--set", metavar="X.Y.Z", dest="new", help="the new version")
    args = parser.parse_args(argv)
    try:
        if args.new is not None:
            set_version(args.new)
        print(version())
    except VersionError as err:
        print(f"scripts/version: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
