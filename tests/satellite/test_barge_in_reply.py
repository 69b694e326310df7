"""After a barge-in ends, the next answer is heard: by ear, on a real satellite.

The user's barge-in dropped the paused answer and left the player paused: the
reply ("Turned on the fan.") was sent, and nothing came out of the speaker
(issue 26). The owner here does what Home Assistant does after each verdict,
then sends the reply; whisper must hear it in what the speaker played.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
import re

from wyoming.event import Event

from devstack import speech
from devstack.satellite import read_until
from tests.satellite.test_barge_in import (
    INTRUDER,
    REQUEST,
    Home,
    config,
    living_room,
    play_answer,
)
import voicestack_protocol as protocol

REPLY = "Turned on the fan."


async def _heard(home: Home, stream: str, since: float) -> str:
    """What the room heard of ``stream`` once the satellite said it was played."""
    played, _ = await read_until(home.owner, "played", 15)
    assert played.data == {"stream": stream, "state": "played"}
    await home.room.quiet(since, quiet_s=0.5)
    return speech.transcribe(home.room.played(since=since)).lower()


async def test_the_reply_to_a_users_barge_in_is_heard(tmp_path: Path) -> None:
    async with living_room(tmp_path, barge_in=config()) as home:
        await play_answer(home)
        await asyncio.sleep(2.0)
        home.room.say_now(speech.speak(REQUEST))
        await read_until(home.owner, protocol.BARGE_IN, 5)
        await home.owner.write_event(Event(protocol.BARGE_IN_REQUEST, {"stream": "s1"}))
        flushed, _ = await read_until(home.owner, "played", 5)
        await read_until(home.owner, "audio-stop", 10)  # the request, streamed
        sent = await play_answer(home, "s2", text=REPLY)
        heard = await _heard(home, "s2", sent)

    assert flushed.data == {"stream": "s1", "state": "flushed"}
    assert re.fullmatch(r"\s*turned on the fan\.\s*", heard), heard


async def test_the_reply_after_a_flushed_verdict_is_heard(tmp_path: Path) -> None:
    """Home Assistant's verdict timeout and a stale verdict flush the answer."""
    async with living_room(tmp_path, barge_in=config()) as home:
        await play_answer(home)
        await asyncio.sleep(2.0)
        said = asyncio.create_task(home.room.say(speech.espeak(INTRUDER)))
        await read_until(home.owner, protocol.BARGE_IN, 5)
        await home.owner.write_event(Event(protocol.FLUSH, {}))
        await read_until(home.owner, "played", 5)
        await said  # the intruder is done: the reply is not talked over
        sent = await play_answer(home, "s2", text=REPLY)
        heard = await _heard(home, "s2", sent)

    assert re.fullmatch(r"\s*turned on the fan\.\s*", heard), heard
    assert "first sentence" not in heard


async def _held_request(home: Home) -> None:
    """The user speaks over the answer; the owner takes it as a held request."""
    await play_answer(home)
    await asyncio.sleep(2.0)
    home.room.say_now(speech.speak(REQUEST))
    await read_until(home.owner, protocol.BARGE_IN, 5)
    await home.owner.write_event(protocol.barge_in_request_event("s1", hold=True))
    _, before = await read_until(home.owner, "audio-stop", 10)  # the request
    # Held: the answer was neither flushed nor played on while it streamed.
    assert not [e for e in before if e.type == "played"], before


async def test_a_held_answer_plays_on_from_the_sentence_after_a_resume(
    tmp_path: Path,
) -> None:
    """The gate was not sure and the speech was no command: the answer goes on."""
    async with living_room(tmp_path, barge_in=config()) as home:
        await _held_request(home)
        resumed = asyncio.get_running_loop().time()
        await home.owner.write_event(protocol.resume_event(0))
        heard = await _heard(home, "s1", resumed)
        sent = await play_answer(home, "s2", text=REPLY)  # and the next answer plays
        after = await _heard(home, "s2", sent)

    assert heard.startswith("the first sentence"), heard
    assert "all there is to say today" in heard, heard
    assert re.fullmatch(r"\s*turned on the fan\.\s*", after), after


async def test_a_held_answer_flushed_lets_the_reply_be_heard(tmp_path: Path) -> None:
    """The gate was not sure and the speech was a command: the reply is heard."""
    async with living_room(tmp_path, barge_in=config()) as home:
        await _held_request(home)
        await home.owner.write_event(protocol.flush_event())
        flushed, _ = await read_until(home.owner, "played", 5)
        sent = await play_answer(home, "s2", text=REPLY)
        heard = await _heard(home, "s2", sent)

    assert flushed.data == {"stream": "s1", "state": "flushed"}
    assert re.fullmatch(r"\s*turned on the fan\.\s*", heard), heard


async def test_a_held_answer_nobody_settles_is_flushed_and_the_next_plays(
    tmp_path: Path,
) -> None:
    """No resume or flush from the owner: the satellite lets go of it by itself."""
    async with living_room(tmp_path, barge_in=config()) as home:
        await _held_request(home)
        given_up, _ = await read_until(home.owner, "played", 20)  # GIVE_UP_S: 15 s
        sent = await play_answer(home, "s2", text=REPLY)
        heard = await _heard(home, "s2", sent)

    assert given_up.data == {"stream": "s1", "state": "flushed"}
    assert re.fullmatch(r"\s*turned on the fan\.\s*", heard), heard
