"""The supported Home Assistant window holds together at both of its ends.

The suite runs on the newest Home Assistant and on the oldest supported one
(requirements/ha-versions.txt); these tests run on each and fail when the
manifest, hacs.json or the installed packages stop matching what Home
Assistant itself would install there.
"""

from __future__ import annotations

import json
from pathlib import Path

from homeassistant.components import wyoming as ha_wyoming
from homeassistant.const import __version__ as ha_version
from packaging.requirements import Requirement
from packaging.version import Version
import wyoming

REPO = Path(__file__).resolve().parents[2]
MANIFEST = json.loads(
    (REPO / "custom_components/voicestack/manifest.json").read_text(encoding="utf-8")
)


def ha_versions() -> dict[str, str]:
    """``name -> homeassistant version`` from requirements/ha-versions.txt."""
    rows = (
        line.split()
        for line in (REPO / "requirements/ha-versions.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    return {row[0]: row[3] for row in rows}


def our_wyoming_requirement() -> Requirement:
    """The manifest's ``wyoming`` requirement."""
    found = [Requirement(r) for r in MANIFEST["requirements"]]
    return next(r for r in found if r.name == "wyoming")


def ha_wyoming_pin() -> Version:
    """The wyoming version Home Assistant's own wyoming integration installs."""
    manifest = json.loads(
        (Path(ha_wyoming.__file__).parent / "manifest.json").read_text(encoding="utf-8")
    )
    pins = [Requirement(r) for r in manifest["requirements"]]
    (pin,) = [r for r in pins if r.name == "wyoming"]
    (spec,) = pin.specifier
    assert spec.operator == "=="
    return Version(spec.version)


def test_hacs_minimum_is_the_oldest_version_the_suite_runs_on() -> None:
    hacs = json.loads((REPO / "hacs.json").read_text(encoding="utf-8"))
    assert hacs["homeassistant"] == ha_versions()["minimum"]


def test_this_run_is_on_one_end_of_the_window() -> None:
    assert ha_version in ha_versions().values()


def test_our_wyoming_requirement_admits_home_assistants_own_pin() -> None:
    """Otherwise HA could not install VoiceStack beside its wyoming integration."""
    assert ha_wyoming_pin() in our_wyoming_requirement().specifier


def test_the_suite_runs_with_the_wyoming_home_assistant_installs() -> None:
    assert Version(wyoming.__version__) == ha_wyoming_pin()


def test_the_lower_bound_is_what_the_oldest_supported_version_installs() -> None:
    """On the oldest HA the suite runs with the lower bound itself.

    So every wyoming field the integration reads exists at the lower bound
    (the suite would fail there otherwise).
    """
    (lower,) = [
        Version(s.version)
        for s in our_wyoming_requirement().specifier
        if s.operator == ">="
    ]
    if ha_versions()["minimum"] == ha_version:
        assert Version(wyoming.__version__) == lower
    else:
        assert Version(wyoming.__version__) >= lower
