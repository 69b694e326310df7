"""Media (a chime, a recorded message, a URL) decoded for the satellite's Speaker.

Home Assistant resolves an announcement's media to a URL. The satellite plays
PCM, so ffmpeg (Home Assistant's own binary, as its wyoming integration uses)
decodes it to 16 kHz mono. HA's preannounce chime is a file inside the
assist_satellite component and is read from disk, not fetched over HTTP; it
precedes most announcements, so it is decoded once and kept.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlparse

from homeassistant.components import assist_satellite, ffmpeg
from homeassistant.components.assist_satellite.const import (
    PREANNOUNCE_FILENAME,
    PREANNOUNCE_URL,
)
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.network import NoURLAvailableError, get_url

from ..const import DOMAIN
from ..core.wav import Pcm

RATE = 16000
MAX_MEDIA_SECONDS = 120  # longer media is cut: an announcement, not a podcast
DECODE_TIMEOUT_S = 30.0
_LOCAL_MEDIA = {
    PREANNOUNCE_URL: Path(assist_satellite.__file__).parent / PREANNOUNCE_FILENAME
}
# Decoded local media (files shipped with Home Assistant do not change while it runs).
_DECODED_LOCAL: dict[str, Pcm] = {}


def media_source(hass: HomeAssistant, url: str) -> str:
    """What ffmpeg reads for ``url``: a local file, or an absolute URL.

    Home Assistant may have made the chime's URL absolute (and signed it).
    """
    if (local := _LOCAL_MEDIA.get(urlparse(url).path)) is not None:
        return str(local)
    if url.startswith("/"):
        try:
            return get_url(hass, allow_external=False) + url
        except NoURLAvailableError as err:
            raise _cannot_play(url, str(err)) from err
    return url


async def async_decode_media(hass: HomeAssistant, url: str) -> Pcm:
    """Decode ``url`` to 16 kHz mono PCM (translated error when it cannot)."""
    source = media_source(hass, url)
    if source in _DECODED_LOCAL:
        return _DECODED_LOCAL[source]
    pcm = await _decode(hass, url, source)
    if urlparse(url).path in _LOCAL_MEDIA:
        _DECODED_LOCAL[source] = pcm
    return pcm


async def _decode(hass: HomeAssistant, url: str, source: str) -> Pcm:
    max_bytes = MAX_MEDIA_SECONDS * RATE * 2
    proc = await asyncio.create_subprocess_exec(
        ffmpeg.get_ffmpeg_manager(hass).binary,
        "-nostdin",
        "-protocol_whitelist",
        "http,https,file,tcp,tls",
        "-i",
        source,
        "-t",
        str(MAX_MEDIA_SECONDS),
        "-f",
        "s16le",
        "-ac",
        "1",
        "-ar",
        str(RATE),
        "pipe:",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        audio, errors = await asyncio.wait_for(proc.communicate(), DECODE_TIMEOUT_S)
    except TimeoutError as err:
        proc.kill()
        await proc.wait()
        raise _cannot_play(url, "decoding took too long") from err
    if proc.returncode != 0 or not audio:
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no audio"]
        raise _cannot_play(url, last[0])
    return Pcm(audio=audio[:max_bytes], rate=RATE, width=2, channels=1)


def _cannot_play(url: str, error: str) -> HomeAssistantError:
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key="media_not_playable",
        translation_placeholders={"media_id": url, "error": error},
    )
