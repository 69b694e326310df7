"""``voicestack.announce``: Home Assistant's side of the announcer.

One ``Announcer`` serves every speaker (its core is HA-free, see
``core/announce``). Each loaded entry adds its satellite
(``satellites.py``), which says its announcements through that
satellite's ``SpeechOutput``, so announcements and voice responses share one
Speaker and never overlap. A media player or another integration's assist
satellite a call names joins on first use (``entity_speakers.py``) and leaves
when it is removed, when the last
entry unloads or when Home Assistant stops. Status reports become
``voicestack_announcement`` events; metrics go to sensors, diagnostics and
``GET /api/voicestack/metrics``.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aiohttp import web
from homeassistant.components import tts
from homeassistant.components.http import (
    KEY_HASS,
    KEY_HASS_USER,
    HomeAssistantView,
)
from homeassistant.const import (
    ATTR_AREA_ID,
    ATTR_DEVICE_ID,
    ATTR_ENTITY_ID,
    ATTR_FLOOR_ID,
    ATTR_LABEL_ID,
    ENTITY_MATCH_ALL,
    EVENT_HOMEASSISTANT_STOP,
)
from homeassistant.core import (
    Event,
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
    split_entity_id,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import (
    config_validation as cv,
    entity_registry as er,
    service,
)
from homeassistant.util.hass_dict import HassKey
import voluptuous as vol

from ..const import DOMAIN, EVENT_ANNOUNCEMENT, SERVICE_ANNOUNCE
from ..core.announce import (
    AnnounceError,
    AnnouncementEvent,
    Announcer,
    Priority,
    SpeakerKind,
)
from ..core.clock import LoopClock
from ..hub import SatelliteHub
from ..request.speech_output import SpeechOutput
from ..runtime import runtime_for_entity, satellite_runtimes
from ..text_limits import MAX_FIELD_LENGTH, cut_message, cut_to
from .entity_speakers import EntitySpeakers, is_entity_speaker
from .satellites import SatelliteAnnouncements

DATA_ANNOUNCER: HassKey[Announcer] = HassKey(f"{DOMAIN}_announcer")
DATA_ENTITY_SPEAKERS: HassKey[EntitySpeakers] = HassKey(f"{DOMAIN}_entity_speakers")
METRICS_URL = "/api/voicestack/metrics"

_FIELD = cut_to(MAX_FIELD_LENGTH)
# Text is cut before anything else looks at it (``text_limits``).
ANNOUNCE_SCHEMA = vol.Schema(
    {
        vol.Required("message"): cut_message,
        # Priority and ttl are checked by the announcer, which answers with a
        # translated error (a schema error would not be translated).
        vol.Optional("priority", default=str(Priority.NORMAL)): _FIELD,
        vol.Optional("category", default="general"): _FIELD,
        vol.Optional("source"): _FIELD,
        # The field before Home Assistant's target was accepted: entity ids, or
        # "all". Kept so existing automations keep working.
        vol.Optional("target"): vol.Any(
            vol.All(cv.string, vol.Lower, vol.In([ENTITY_MATCH_ALL])), cv.entity_ids
        ),
        **cv.TARGET_SERVICE_FIELDS,
        vol.Optional("dedup_key"): _FIELD,
        vol.Optional("ttl"): vol.Any(vol.Coerce(float), _FIELD),
        # Checked in the action (a translated error): a ``tts.*`` entity.
        vol.Optional("tts_engine"): _FIELD,
    }
)


def async_setup_announcements(hass: HomeAssistant) -> None:
    """Create the announcer, the action, the metrics view; stop with HA."""
    clock = LoopClock(hass.loop)
    announcer = Announcer(
        clock,
        on_event=lambda event: _on_event(hass, event),
        loop=hass.loop,
    )
    hass.data[DATA_ANNOUNCER] = announcer
    players = hass.data[DATA_ENTITY_SPEAKERS] = EntitySpeakers(hass, announcer, clock)

    async def announce(call: ServiceCall) -> ServiceResponse:
        satellites, media_players = await _targets(hass, call)
        players.add(media_players, _tts_engine(hass, call))
        targets = None if satellites is None else [*satellites, *media_players]
        return _announce(hass, announcer, call, targets)

    hass.services.async_register(
        DOMAIN,
        SERVICE_ANNOUNCE,
        announce,
        schema=ANNOUNCE_SCHEMA,
        supports_response=SupportsResponse.OPTIONAL,
    )
    hass.http.register_view(MetricsView())

    async def on_stop(_event: Event) -> None:
        players.forget()
        await announcer.shutdown(goodbye=True)

    hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, on_stop)


def async_add_satellite(
    hass: HomeAssistant, hub: SatelliteHub, speech: SpeechOutput
) -> SatelliteAnnouncements:
    """Announce on ``hub``'s satellite until its ``remove``.

    When the last entry goes, the media players leave the announcer too.
    """

    async def removed() -> None:
        if not hass.config_entries.async_loaded_entries(DOMAIN):
            await hass.data[DATA_ENTITY_SPEAKERS].remove_all()

    return SatelliteAnnouncements(
        hass.data[DATA_ANNOUNCER], hub, speech, on_removed=removed
    )


_TARGET_KEYS = (
    ATTR_ENTITY_ID,
    ATTR_DEVICE_ID,
    ATTR_AREA_ID,
    ATTR_FLOOR_ID,
    ATTR_LABEL_ID,
)


async def _targets(
    hass: HomeAssistant, call: ServiceCall
) -> tuple[list[str] | None, list[str]]:
    """The satellites (by id; None: every one) and entity speakers a call names.

    Home Assistant's target (entities, devices, areas, floors, labels) and the
    ``target`` field both work. An entity named outright must be a VoiceStack
    satellite, a media player or another integration's assist satellite; a
    device, area, floor or label gives the ones it holds, and must hold one. A
    device with both (a Voice PE) is spoken on through its assist satellite
    only, so it hears each message once. No target (or ``all``) is every
    VoiceStack satellite, never every player.
    """
    data = call.data
    legacy = data.get("target")
    if ENTITY_MATCH_ALL in (legacy, data.get(ATTR_ENTITY_ID)):
        return None, []
    if legacy is None and not any(key in data for key in _TARGET_KEYS):
        return None, []
    entity_ids = data.get(ATTR_ENTITY_ID)  # a list, or "none"
    named = [
        *(legacy or []),
        *er.async_validate_entity_ids(
            er.async_get(hass), entity_ids if isinstance(entity_ids, list) else []
        ),
    ]
    players = [entity_id for entity_id in named if is_entity_speaker(hass, entity_id)]
    runtimes = []
    for entity_id in named:
        if (runtime := runtime_for_entity(hass, entity_id)) is not None:
            runtimes.append(runtime)
        elif entity_id not in players:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="announce_not_a_speaker",
                translation_placeholders={"entity_id": entity_id},
            )
    referenced = await service.async_extract_entity_ids(call)
    found = []
    for entity_id in sorted(referenced - set(named)):
        if (runtime := runtime_for_entity(hass, entity_id)) is not None:
            runtimes.append(runtime)
        elif is_entity_speaker(hass, entity_id):
            found.append(entity_id)
    players.extend(_once_per_device(hass, found))
    if not runtimes and not players:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="announce_no_satellite"
        )
    satellites = [runtime.hub.satellite_id for runtime in runtimes]
    return list(dict.fromkeys(satellites)), list(dict.fromkeys(players))


def _once_per_device(hass: HomeAssistant, entity_ids: list[str]) -> list[str]:
    """``entity_ids`` but the media players of a device that has an assist satellite."""
    registry = er.async_get(hass)

    def device(entity_id: str) -> str | None:
        entry = registry.async_get(entity_id)
        return None if entry is None else entry.device_id

    satellites = {
        device(e) for e in entity_ids if split_entity_id(e)[0] == "assist_satellite"
    }
    return [
        e
        for e in entity_ids
        if split_entity_id(e)[0] == "assist_satellite"
        or device(e) is None
        or device(e) not in satellites
    ]


def _tts_engine(hass: HomeAssistant, call: ServiceCall) -> str | None:
    """The ``tts_engine`` a call names, if any: it must be a ``tts`` entity."""
    engine: str | None = call.data.get("tts_engine")
    if engine is not None and (
        not _is_tts_entity(engine) or tts.async_resolve_engine(hass, engine) is None
    ):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="announce_unknown_tts_engine",
            translation_placeholders={"engine": engine},
        )
    return engine


def _is_tts_entity(engine: str) -> bool:
    try:
        return split_entity_id(engine)[0] == tts.DOMAIN
    except ValueError:
        return False


def _announce(
    hass: HomeAssistant,
    announcer: Announcer,
    call: ServiceCall,
    targets: list[str] | None,
) -> ServiceResponse:
    data = call.data
    try:
        receipts = announcer.announce(
            data["message"],
            priority=data["priority"],
            category=data["category"],
            source=data.get("source") or _calling_script(hass, call),
            targets=targets,
            dedup_key=data.get("dedup_key"),
            ttl_s=data.get("ttl"),
        )
    except AnnounceError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key=f"announce_{err.code}",
            translation_placeholders={"error": str(err)},
        ) from err
    _notify_all(hass)
    return {"announcements": [receipt.as_dict() for receipt in receipts]}


def _calling_script(hass: HomeAssistant, call: ServiceCall) -> str:
    """The automation or script whose run made this call, else ``service``.

    An automation or script runs its actions in the context it last wrote its
    own state with, so the caller is the one whose state has the call's context.
    """
    for domain in ("automation", "script"):
        for state in hass.states.async_all(domain):
            if state.context.id == call.context.id:
                return state.entity_id
    return "service"


@callback
def _on_event(hass: HomeAssistant, event: AnnouncementEvent) -> None:
    data = event.as_dict()
    if event.speaker_kind in (SpeakerKind.MEDIA_PLAYER, SpeakerKind.ASSIST_SATELLITE):
        data["entity_id"] = event.speaker
    elif (hub := _hub(hass, event.speaker)) is not None:
        data["entity_id"] = hub.satellite_entity_id()
        hub.notify()
    hass.bus.async_fire(EVENT_ANNOUNCEMENT, data)


def _hub(hass: HomeAssistant, key: str) -> SatelliteHub | None:
    return next(
        (r.hub for r in satellite_runtimes(hass) if r.hub.satellite_id == key),
        None,
    )


def _notify_all(hass: HomeAssistant) -> None:
    for runtime in satellite_runtimes(hass):  # agent entries have no hub
        runtime.hub.notify()


class MetricsView(HomeAssistantView):
    """``GET /api/voicestack/metrics``: the announcer's metrics, admins only.

    They name every satellite by its id (a MAC address by default), so a
    non-admin gets 403 (and a request without a token 401, from Home Assistant).
    """

    url = METRICS_URL
    name = "api:voicestack:metrics"

    async def get(self, request: web.Request) -> web.Response:
        """Per satellite, per speaker and total; 503 with nothing to announce on.

        (No satellite is loaded and no media player has been announced on.)
        """
        if not request[KEY_HASS_USER].is_admin:
            return self.json_message("Admin only", HTTPStatus.FORBIDDEN)
        hass: HomeAssistant = request.app[KEY_HASS]
        announcer = hass.data.get(DATA_ANNOUNCER)
        if announcer is None or not announcer.speakers:
            return self.json_message(
                "VoiceStack is not loaded", HTTPStatus.SERVICE_UNAVAILABLE
            )
        body: dict[str, Any] = announcer.metrics().as_dict()
        return self.json(body)
