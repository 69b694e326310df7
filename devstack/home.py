"""A real Home Assistant in this process, started the way ``hass`` starts it.

``bootstrap.async_setup_hass`` on the demo home's configuration.yaml
(``devstack.home_config``) in a temporary config dir, with HA's own ``wyoming``
entries for the engines and an Assist pipeline of them, set as preferred. A
satellite is given either to VoiceStack or to HA's built-in ``wyoming``
integration, never to both: a satellite has one owner.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
import logging
from pathlib import Path
import time
from typing import Any
from unittest import mock

from homeassistant import bootstrap, runner
from homeassistant.components.assist_pipeline import PipelineEvent
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.config_entries import SOURCE_USER, ConfigEntry, ConfigEntryState
import homeassistant.const as ha_const
from homeassistant.const import CONF_HOST, CONF_PORT, EVENT_STATE_CHANGED
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import area_registry as ar, entity_registry as er

from custom_components.voicestack.const import DOMAIN, EVENT_UTTERANCE
from devstack import servers
from devstack.assist_pipeline import create_preferred_pipeline, entity_of
from devstack.engines import Engines
from devstack.errors import StackError
from devstack.home_config import AREAS, DEVICES, write_config
from devstack.servers import LOOPBACK
from devstack.state_log import SatelliteStateLog

HA_START_TIMEOUT_S = 90.0
HA_VERSION: str = ha_const.__version__


class Owner(StrEnum):
    """Which Home Assistant integration runs the satellite (one at a time)."""

    VOICESTACK = DOMAIN
    WYOMING = "wyoming"

    @property
    def label(self) -> str:
        """How the owner is named in output."""
        return "VoiceStack" if self is Owner.VOICESTACK else "HA wyoming"


# -- Home Assistant -------------------------------------------------------------------


@contextmanager
def _bootstrap_without_web_ui() -> Iterator[None]:
    """Let bootstrap set up only what configuration.yaml and config entries name.

    ``hass`` also sets up its default integrations (frontend, backup, analytics,
    ...) and falls back to recovery mode when the frontend does not load. The
    frontend's package (home-assistant-frontend) is not part of the test stack in
    .venv and the demo has no browser, so both lists are emptied while
    bootstrapping; everything else is the stock start-up.
    """
    with (
        mock.patch.object(bootstrap, "DEFAULT_INTEGRATIONS", set()),
        mock.patch.object(bootstrap, "CRITICAL_INTEGRATIONS", set()),
    ):
        yield


def _quiet_console() -> None:
    """Only errors on the console; Home Assistant's log file gets the rest.

    Bootstrap only adds a console handler when the root logger has none.
    """
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        # A filter, not a level: HA's queue listener ignores handler levels.
        handler.addFilter(lambda record: record.levelno >= logging.ERROR)
        handler.setFormatter(logging.Formatter("%(levelname)s [%(name)s] %(message)s"))
        root.addHandler(handler)


async def _bootstrap(config: runner.RuntimeConfig) -> HomeAssistant:
    """``hass``'s own set-up: logging, configuration.yaml, registries, integrations."""
    try:
        async with asyncio.timeout(HA_START_TIMEOUT_S):
            with _bootstrap_without_web_ui():
                hass = await bootstrap.async_setup_hass(config)
    except TimeoutError as err:
        raise StackError(
            f"Home Assistant did not set up within {HA_START_TIMEOUT_S:.0f} s"
        ) from err
    if hass is None:
        raise StackError(f"Home Assistant could not use {config.config_dir}")
    return hass


async def _start(hass: HomeAssistant) -> None:
    """Start the set-up Home Assistant (``homeassistant_start``, then ``started``)."""
    try:
        async with asyncio.timeout(HA_START_TIMEOUT_S):
            await hass.async_start()
    except TimeoutError as err:
        raise StackError(
            f"Home Assistant did not start within {HA_START_TIMEOUT_S:.0f} s"
        ) from err


async def _confirm_http_config(hass: HomeAssistant) -> None:
    """Keep the dev stack's HTTP config, as a user confirms a new one in the UI.

    Home Assistant 2026.11 runs a new HTTP config (the free port written for
    this run) as a trial and, unconfirmed after 5 minutes, restarts to revert
    it: a run longer than that lost its services (a device no longer switched).
    Older versions have no trial.
    """
    try:
        from homeassistant.components.http.config import (
            DATA_STORE,
            ActiveConfigType,
        )
    except ImportError:
        return
    store = hass.data.get(DATA_STORE)
    if store is not None and store.active_config_type is ActiveConfigType.PENDING:
        await store.async_promote_pending()


@dataclass(slots=True)
class Home:
    """A running Home Assistant with the demo home."""

    hass: HomeAssistant
    config_dir: Path
    http_port: int
    pipeline_id: str = ""
    entity_states: SatelliteStateLog = field(default_factory=SatelliteStateLog)
    utterances: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    _seen_runs: set[str] = field(default_factory=set)

    @property
    def log_file(self) -> Path:
        """Home Assistant's log (warnings and errors, VoiceStack at info)."""
        return self.config_dir / "home-assistant.log"

    # -- start and stop ---------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def running(cls, config_dir: Path) -> AsyncIterator[Home]:
        """Bootstrap Home Assistant on a fresh config dir, start it, stop it after.

        Files are written before bootstrap enables Home Assistant's detector of
        blocking calls in the event loop.
        """
        http_port = servers.free_port()
        await asyncio.to_thread(write_config, config_dir, http_port)
        _quiet_console()
        config = runner.RuntimeConfig(
            config_dir=str(config_dir),
            skip_pip=True,  # everything is installed; never reach for the network
            log_file=str(config_dir / "home-assistant.log"),
            log_no_color=True,
        )
        hass = await _bootstrap(config)
        try:
            await _start(hass)
            await _confirm_http_config(hass)
            home = cls(hass, config_dir, http_port)
            home._check_started()
            hass.bus.async_listen(EVENT_STATE_CHANGED, home.entity_states.record)
            hass.bus.async_listen(EVENT_UTTERANCE, home._record_utterance)
            home._place_devices()
            yield home
        finally:
            await hass.async_stop()

    def _check_started(self) -> None:
        wanted = {"http", "conversation", "assist_pipeline", "intent_script"}
        wanted |= {"input_boolean", "light", "switch"}
        missing = wanted - set(self.hass.config.components)
        if self.hass.config.recovery_mode or missing:
            raise StackError(
                f"Home Assistant started without {', '.join(sorted(missing)) or 'its config'}"
                f" (recovery mode: {self.hass.config.recovery_mode}); see {self.log_file}"
            )
        absent = [d for d in DEVICES if self.hass.states.get(d) is None]
        if absent:
            raise StackError(f"demo devices missing: {absent}; see {self.log_file}")

    def _place_devices(self) -> None:
        """Areas: "the kitchen lights" finds light.kitchen by its area too."""
        areas = ar.async_get(self.hass)
        entities = er.async_get(self.hass)
        for entity_id, area in AREAS.items():
            area_id = areas.async_get_or_create(area).id
            entities.async_update_entity(entity_id, area_id=area_id)

    # -- Assist -----------------------------------------------------------------------

    async def set_up_assist(self, engines: Engines) -> str:
        """Wyoming entries for whisper and Piper, and a preferred pipeline of them.

        Returns the pipeline's name.
        """
        stt_entry = await self._add_entry("wyoming", engines.whisper.port)
        tts_entry = await self._add_entry("wyoming", engines.piper.port)
        pipeline = await create_preferred_pipeline(
            self.hass, stt_entry, tts_entry, "VoiceStack demo"
        )
        self.pipeline_id = pipeline.id
        return pipeline.name

    async def _add_entry(self, domain: str, port: int) -> ConfigEntry:
        """Add a config entry through its config flow, as a user would in the UI."""
        result = await self.hass.config_entries.flow.async_init(
            domain,
            context={"source": SOURCE_USER},
            data={CONF_HOST: LOOPBACK, CONF_PORT: port},
        )
        if result["type"] is not FlowResultType.CREATE_ENTRY:
            reason = result.get("reason") or result.get("errors")
            raise StackError(f"{domain} did not accept {LOOPBACK}:{port}: {reason}")
        entry = result["result"]
        if entry.state is not ConfigEntryState.LOADED:
            raise StackError(
                f"{domain} entry {entry.title!r} did not load ({entry.state}); "
                f"see {self.log_file}"
            )
        return entry

    def entity_of(self, entry: ConfigEntry, domain: str) -> str:
        """The one ``domain`` entity that ``entry`` created."""
        return entity_of(self.hass, entry, domain)

    # -- the satellite's owner --------------------------------------------------------

    async def add_satellite(self, owner: Owner, port: int) -> ConfigEntry:
        """Give the satellite at ``port`` to ``owner``, which must be its only one."""
        for other in Owner:
            for entry in self.hass.config_entries.async_entries(other.value):
                if entry.data.get(CONF_PORT) == port:
                    raise StackError(
                        f"the satellite is already owned by {other.label}: one owner"
                    )
        return await self._add_entry(owner.value, port)

    async def remove(self, entry: ConfigEntry) -> None:
        """Remove an entry (its link or satellite loop stops)."""
        await self.hass.config_entries.async_remove(entry.entry_id)

    # -- what happened ----------------------------------------------------------------

    @callback
    def _record_utterance(self, event: Event) -> None:
        self.utterances.append((time.time(), dict(event.data)))

    async def wait_for_entity(
        self, entity_id: str, state: str, after: float, timeout_s: float, what: str
    ) -> float:
        """When ``entity_id`` entered ``state`` after ``after`` (waits up to a timeout)."""
        log = self.entity_states
        try:
            async with asyncio.timeout(timeout_s):
                while (at := log.first(entity_id, state, after)) is None:
                    log.changed.clear()
                    await log.changed.wait()
        except TimeoutError as err:
            raise StackError(f"no {what} within {timeout_s:.0f} s") from err
        return at

    def new_pipeline_runs(self) -> list[list[PipelineEvent]]:
        """Events of the pipeline runs since the last call (HA's debug record)."""
        debug = self.hass.data[KEY_ASSIST_PIPELINE].pipeline_debug
        runs = debug.get(self.pipeline_id, {})
        fresh = [run_id for run_id in runs if run_id not in self._seen_runs]
        self._seen_runs.update(fresh)
        return [runs[run_id].events for run_id in fresh]

    def device_states(self) -> dict[str, str]:
        """The demo devices' states."""
        return {d: s.state if (s := self.hass.states.get(d)) else "?" for d in DEVICES}

    async def reset(self) -> None:
        """Everything off and the TTS cache empty, so each run synthesizes anew."""
        for boolean in ("kitchen_light_power", "living_room_lamp_power", "fan_power"):
            await self.hass.services.async_call(
                "input_boolean",
                "turn_off",
                {"entity_id": f"input_boolean.{boolean}"},
                blocking=True,
            )
        await self.hass.services.async_call("tts", "clear_cache", blocking=True)
