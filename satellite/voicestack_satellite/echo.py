"""The reply's echo: what the mic still hears after the speaker went quiet.

Room, device and mic buffers hold the reply for a moment after its last
sample (``--echo-tail``); speech that starts inside that tail is the echo,
not someone answering, and must start no request.
"""

from __future__ import annotations


class EchoTail:
    """Tells the echo from new speech, in absolute mic samples."""

    def __init__(self, tail_samples: int) -> None:
        """``tail_samples``: how long after playback speech counts as echo."""
        self.tail = tail_samples
        self.ended_at = 0  # mic sample when the speaker last went quiet
        self.until = 0  # speech starting before this is the echo
        self._in_echo = False  # the speech going on began inside the tail

    def playback_ended(self, at: int) -> None:
        """The speaker went quiet at mic sample ``at``."""
        self.ended_at = at
        self.until = at + self.tail

    def heard(self, speech: bool, onset: int) -> bool:
        """``speech`` (starting at mic sample ``onset``) unless it is the echo.

        Speech that begins inside the tail is ignored until it ends (a chunk
        without speech): an echo longer than the tail must not pass for new
        speech the moment the tail is over.
        """
        if not speech:
            self._in_echo = False
            return False
        if onset < self.until:
            self._in_echo = True
        return not self._in_echo
