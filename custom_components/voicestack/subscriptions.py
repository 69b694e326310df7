"""A list of subscribers, each added with the function that removes it again.

The glue's modules talk to each other through these instead of callback slots:
whoever wants to hear subscribes and keeps the remover (an entity hands it to
``async_on_remove``), and nobody assigns a function onto someone else's object.
"""

from __future__ import annotations

from collections.abc import Iterator

from homeassistant.core import CALLBACK_TYPE, callback


class Subscribers[T]:
    """The subscribers of one kind of news, in the order they subscribed."""

    def __init__(self) -> None:
        """Nobody yet."""
        self._subscribers: list[T] = []

    @callback
    def add(self, subscriber: T) -> CALLBACK_TYPE:
        """Add ``subscriber``; the function that removes it (harmless twice)."""
        self._subscribers.append(subscriber)

        @callback
        def remove() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return remove

    def __iter__(self) -> Iterator[T]:
        """A snapshot: a subscriber may unsubscribe while being told."""
        return iter(list(self._subscribers))

    def __len__(self) -> int:
        """How many listen (diagnostics, and the tests that unload cleanly)."""
        return len(self._subscribers)
