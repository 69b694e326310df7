"""The Home Assistant API VoiceStack uses exists in the installed Home Assistant.

The suite runs on each supported release (2026.11.0 and 2026.3.4), so the static
scan (ha_api_surface.py) checks the integration against both: every imported
``homeassistant.*`` name and attribute, every overridden base-class method's
signature, and private base-class members used outside ``compat.py``. The scan
never imports the integration, so it reports even while the integration does
not import. The scanner's own tests run it on small packages written here.
"""

from __future__ import annotations

from pathlib import Path
import textwrap

from homeassistant.components.assist_satellite import AssistSatelliteEntity
from homeassistant.components.select import SelectEntity
from homeassistant.helpers.entity import ToggleEntity
import pytest

from tests.integration.ha_api_surface import (
    MISSING,
    PACKAGE_DIR,
    PRIVATE,
    SIGNATURE,
    Problem,
    main,
    scan,
)


def _where(cls: type) -> str:
    """Where the installed Home Assistant defines ``cls`` (it moves between releases)."""
    return f"{cls.__module__}.{cls.__qualname__}"


@pytest.fixture(scope="module")
def problems() -> list[Problem]:
    """One scan of the real integration, shared by its tests."""
    return scan(PACKAGE_DIR)


def test_every_home_assistant_name_the_integration_uses_exists(
    problems: list[Problem],
) -> None:
    assert [str(p) for p in problems if p.kind in (MISSING, SIGNATURE)] == []


def test_only_compat_touches_private_home_assistant_members(
    problems: list[Problem],
) -> None:
    assert [str(p) for p in problems if p.kind == PRIVATE] == []


# -- the scanner on small packages ---------------------------------------------


def _scan(package: Path, **files: str) -> list[tuple[str, int, str, str]]:
    """Write ``name=source`` as ``name.py`` into ``package`` and scan it."""
    package.mkdir(exist_ok=True)
    for name, source in files.items():
        (package / f"{name}.py").write_text(textwrap.dedent(source))
    return [(p.file.name, p.line, p.kind, p.message) for p in scan(package)]


def _select_entity(override: str) -> str:
    """A module whose ``SelectEntity`` subclass defines ``override`` (line 4 on)."""
    return (
        "from homeassistant.components.select import SelectEntity\n\n"
        "class ModeSelect(SelectEntity):\n"
        f"{textwrap.indent(override, '    ')}\n"
        "        raise NotImplementedError\n"
    )


def test_missing_names_are_reported_with_their_line(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        mod="""\
        from homeassistant.components import conversation
        from homeassistant.components.select import SelectEntity, NoSuchEntity
        import homeassistant.components.no_such_component as gone

        AGENT = conversation.NO_SUCH_AGENT
        """,
    )

    assert found == [
        ("mod.py", 2, MISSING, "homeassistant.components.select.NoSuchEntity"),
        ("mod.py", 3, MISSING, "homeassistant.components.no_such_component"),
        ("mod.py", 5, MISSING, "homeassistant.components.conversation.NO_SUCH_AGENT"),
    ]


def test_names_that_exist_are_not_reported(tmp_path: Path) -> None:
    found = _scan(
        tmp_path,
        mod="""\
        import asyncio

        from homeassistant.components import conversation, tts
        from homeassistant.components.select import SelectEntity
        from homeassistant.const import Platform
        import homeassistant.helpers.device_registry
        from homeassistant.helpers import entity_registry as er

        from .other import anything

        USED = (
            conversation.async_converse,
            tts.async_get_stream,
            er.async_get,
            homeassistant.helpers.device_registry.async_get,
            Platform.SELECT,
            SelectEntity.async_select_option,
            asyncio.no_such_thing,
            anything.whatever,
        )
        """,
    )

    assert found == []


@pytest.mark.parametrize(
    ("override", "change"),
    [
        ("async def async_select_option(self) -> None:", "lacks parameter 'option'"),
        (
            "def async_select_option(self, option: str) -> None:",
            "async in Home Assistant, not here",
        ),
        (
            "async def async_select_option(self, option: str, mode: str) -> None:",
            "adds required parameter 'mode'",
        ),
        (
            "async def async_select_option(self, *, option: str) -> None:",
            (
                "parameter 'option' is keyword-only here, "
                "positional or keyword in Home Assistant"
            ),
        ),
        (
            "def current_option(self) -> str | None:",
            "a method here, a property in Home Assistant",
        ),
    ],
)
def test_a_changed_override_is_reported(
    tmp_path: Path, override: str, change: str
) -> None:
    found = _scan(tmp_path, select=_select_entity(override))

    name = override.partition("(")[0].split()[-1]
    message = f"ModeSelect.{name} overrides {_where(SelectEntity)}.{name}: {change}"
    assert found == [("select.py", 4, SIGNATURE, message)]


@pytest.mark.parametrize(
    "override",
    [
        "async def async_select_option(self, option: str) -> None:",
        "async def async_select_option(self, choice: str = '', **kwargs) -> None:",
        "async def async_select_option(self, option: str, mode: int = 0) -> None:",
        "def __init__(self, hub: object) -> None:",
        "@property\ndef current_option(self) -> str | None:",
    ],
)
def test_a_compatible_override_is_not_reported(tmp_path: Path, override: str) -> None:
    assert _scan(tmp_path, select=_select_entity(override)) == []


def test_overrides_are_checked_through_the_integrations_own_bases(
    tmp_path: Path,
) -> None:
    found = _scan(
        tmp_path,
        entity="""\
        from homeassistant.helpers.entity import Entity

        class OwnEntity(Entity):
            pass
        """,
        switch="""\
        from homeassistant.components.switch import SwitchEntity

        from .entity import OwnEntity

        class Setting(OwnEntity):
            pass

        class Mute(Setting, SwitchEntity):
            async def async_turn_on(self) -> None:
                pass
        """,
    )

    base = _where(ToggleEntity)  # where SwitchEntity gets async_turn_on from
    message = f"Mute.async_turn_on overrides {base}.async_turn_on: lacks **kwargs"
    assert found == [("switch.py", 9, SIGNATURE, message)]


SATELLITE = """\
from homeassistant.components.assist_satellite import AssistSatelliteEntity

class Satellite(AssistSatelliteEntity):
    _attr_name = None

    def __init__(self) -> None:
        self._own = True

    def listen(self) -> None:
        self._run_has_tts = True
        self._set_state(self._own)
"""


def test_private_home_assistant_members_are_reported(tmp_path: Path) -> None:
    found = _scan(tmp_path, satellite=SATELLITE)

    owner = _where(AssistSatelliteEntity)
    assert found == [
        (
            "satellite.py",
            10,
            PRIVATE,
            f"Satellite uses _run_has_tts, private to {owner}",
        ),
        ("satellite.py", 11, PRIVATE, f"Satellite uses _set_state, private to {owner}"),
    ]


def test_compat_may_use_private_home_assistant_members(tmp_path: Path) -> None:
    assert _scan(tmp_path, compat=SATELLITE) == []


def test_a_config_flow_may_use_the_documented_underscored_helpers(
    tmp_path: Path,
) -> None:
    found = _scan(
        tmp_path,
        config_flow="""\
        from homeassistant.config_entries import ConfigFlow

        class Flow(ConfigFlow, domain="test"):
            async def async_step_user(self, user_input=None):
                self._abort_if_unique_id_configured()
                return self.async_create_entry(title="", data={})
        """,
    )

    assert found == []


def test_main_prints_the_problems_and_fails_when_there_are_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "pkg"
    _scan(package, clean="from homeassistant.const import Platform\n")
    assert main(["ha_api_surface", str(package)]) == 0

    _scan(package, broken="from homeassistant.const import NO_SUCH_CONSTANT\n")
    assert main(["ha_api_surface", str(package)]) == 1
    assert "broken.py:1: missing name: homeassistant.const.NO_SUCH_CONSTANT" in (
        capsys.readouterr().out
    )
