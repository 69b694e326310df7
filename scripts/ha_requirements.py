"""Print the PyPI requirements of the Home Assistant components the tests load.

pytest-homeassistant-custom-component installs ``homeassistant`` alone; each
component's own packages (hassil, home-assistant-intents, mutagen, ha-ffmpeg,
pymicro-vad, ...) are what HA would install when the component is set up. This
reads them from the manifests of the installed HA, following ``dependencies``
and ``after_dependencies``, so scripts/setup installs exactly those, constrained
by HA's own ``package_constraints.txt``. VoiceStack's own voicestack-protocol,
which its manifest requires, is left out: scripts/setup installs it from
./protocol (PyPI has a version only once it is released).

Usage (inside the HA virtualenv):  python -m scripts.ha_requirements [component ...]
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import sys

import homeassistant.components

# What the tests, the demo, the benchmarks and VoiceStack itself set up.
COMPONENTS = (
    "homeassistant",
    "voicestack",
    "assist_pipeline",
    "assist_satellite",
    "conversation",
    "intent",
    "intent_script",
    "tts",
    "stt",
    "wake_word",
    "wyoming",
    "ffmpeg",
    "http",
    "todo",
    "local_todo",
    "timer",
    "input_boolean",
    "template",
    "light",
    "lock",
    "switch",
    "fan",
    "cover",
    "script",
    "media_player",
    "repairs",
    "diagnostics",
    "logbook",
    "recorder",
    # The browser test's frontend lists every service; a service's feature
    # filter imports camera, whose module imports PyTurboJPEG.
    "frontend",
    "camera",
)

COMPONENTS_DIR = Path(homeassistant.components.__file__).parent
# Requirements built from this repository (scripts/setup installs them editable).
OWN_PACKAGE = re.compile(r"voicestack-protocol\b", re.IGNORECASE)
VOICESTACK_MANIFEST = (
    Path(__file__).resolve().parent.parent
    / "custom_components"
    / "voicestack"
    / "manifest.json"
)


def manifest(domain: str) -> dict:
    """The manifest of ``domain`` (VoiceStack's own from this repository)."""
    path = (
        VOICESTACK_MANIFEST
        if domain == "voicestack"
        else COMPONENTS_DIR / domain / "manifest.json"
    )
    return json.loads(path.read_text(encoding="utf-8"))


def requirements(domains: tuple[str, ...]) -> list[str]:
    """Every requirement of ``domains`` and what they depend on, sorted, once."""
    seen: set[str] = set()
    found: set[str] = set()
    todo = list(domains)
    while todo:
        domain = todo.pop()
        if domain in seen or not (
            domain == "voicestack" or (COMPONENTS_DIR / domain).is_dir()
        ):
            continue
        seen.add(domain)
        data = manifest(domain)
        found.update(
            r for r in data.get("requirements", ()) if not OWN_PACKAGE.match(r)
        )
        todo.extend(data.get("dependencies", ()))
        todo.extend(data.get("after_dependencies", ()))
    return sorted(found, key=str.lower)


if __name__ == "__main__":
    print("\n".join(requirements(tuple(sys.argv[1:]) or COMPONENTS)))
