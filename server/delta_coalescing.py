"""Streamed text reaches the editor as fast as it can take it, and never more than that.

A `text_delta` / `reasoning_delta` event goes out at once while the output is idle: a client
that keeps up gets every delta as its own notification, with no added wait. While a write is
still pending (the client has not read what we sent, `busy()` is true), deltas of the same kind,
session and turn join one pending event; it is sent when the output drains (`drained()`),
before any other event (so the order the loop emitted stays the order on the wire), or when it
reaches `limit` characters. Text is only ever concatenated, never dropped, and the pending text
is bounded: past `limit` it goes to the writer, whose own buffer is bounded (`lsp/pipe_writer.py`:
past its limit it blocks, which stops the loop from reading the provider's stream).
"""

from __future__ import annotations

from typing import Callable, Union

import msgspec

from .protocol import Event, ReasoningDeltaEvent, TextDeltaEvent

Delta = Union[TextDeltaEvent, ReasoningDeltaEvent]
LIMIT_CHARS = 64 * 1024


def _never_busy() -> bool:
    return False


class DeltaCoalescer:
    def __init__(self, send: Callable[[Event], None], busy: Callable[[], bool] = _never_busy,
                 limit: int = LIMIT_CHARS) -> None:
        self._send = send
        self.busy = busy
        self._limit = limit
        self._pending: Delta | None = None
        self._parts: list[str] = []
        self._size = 0

    def event(self, event: Event) -> None:
        if isinstance(event, (TextDeltaEvent, ReasoningDeltaEvent)):
            pending = self._pending
            if pending is not None:
                if type(pending) is type(event) and pending.sessionId == event.sessionId and pending.turnId == event.turnId:
                    self._parts.append(event.text)
                    self._size += len(event.text)
                    if self._size >= self._limit:
                        self.flush()
                    return
                self.flush()
            if not self.busy():
                self._send(event)
                return
            self._pending, self._parts, self._size = event, [event.text], len(event.text)
            return
        self.flush()
        self._send(event)

    def drained(self) -> None:
        """The output has written everything it held: what waited goes now."""
        self.flush()

    def flush(self) -> None:
        pending, parts = self._pending, self._parts
        if pending is None:
            return
        self._pending, self._parts, self._size = None, [], 0
        self._send(msgspec.structs.replace(pending, text="".join(parts)) if len(parts) > 1 else pending)
