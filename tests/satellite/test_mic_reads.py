"""The mic is read every 20 ms for barge-in; the listener still gets 80 ms chunks.

Barge-in decides on each read as it comes: with 80 ms reads a voice over an
answer waited up to 80 ms (40 ms on average) before the satellite heard it
(bench/barge_in_stages.py). The wake word steps 80 ms at a time, so the
listener gets whole 80 ms chunks, the same samples in the same order.
"""

from __future__ import annotations

import numpy as np

from voicestack_satellite.mic_format import (
    CHUNK_SAMPLES,
    NATIVE,
    READ_SAMPLES,
    MicConverter,
    MicFormat,
    Rechunk,
)


def test_reads_are_20_ms() -> None:
    """A native mic and a 48 kHz stereo one are both read 20 ms at a time."""
    assert READ_SAMPLES == 320
    assert NATIVE.read_bytes == READ_SAMPLES * 2
    converter = MicConverter(MicFormat(48000, 2, 2))
    silence = bytes(MicFormat(48000, 2, 2).read_bytes * 10)
    assert {len(chunk) for chunk in converter.convert(silence)} == {READ_SAMPLES}


def test_the_listener_gets_whole_80_ms_chunks_in_order() -> None:
    """Four 20 ms reads make one chunk; an 80 ms read passes through at once."""
    rechunk = Rechunk()
    samples = np.arange(3 * CHUNK_SAMPLES, dtype=np.int16)
    out = []
    for at in range(0, 2 * CHUNK_SAMPLES, READ_SAMPLES):
        chunk = rechunk.add(samples[at : at + READ_SAMPLES])
        ready = (at + READ_SAMPLES) % CHUNK_SAMPLES == 0
        assert (chunk is not None) == ready
        if chunk is not None:
            assert len(chunk) == CHUNK_SAMPLES
            out.append(chunk)
    whole = rechunk.add(samples[2 * CHUNK_SAMPLES :])
    assert whole is not None
    out.append(whole)
    assert np.array_equal(np.concatenate(out), samples)
