"""Streamed text reaches the editor as fast as it can take it, and never more than that.

A `text_delta` / `reasoning_delta` event goes out at once while nothing is waiting: a client
that keeps up, from a server that keeps up, gets every delta as its own notification, with no
added wait. Deltas of the same kind, session and turn join one pending event in two cases:

- the client is behind: a write is still pending (it has not read what we sent, `busy()` is
  true); what is joined goes when the output drains (`drained()`);
- the server is behind: the provider's stream delivered more than it could send one by one.
  Deltas handled in one uninterrupted run of the event loop were all waiting in one network
  read; once a run has sent `BEHIND_AFTER` deltas and lasted `BEHIND_S`, the rest of that run's
  deltas are joined, and go when the run ends (the loop turns: the backlog is parsed) or once
  held for `BEHIND_S`, so a burst costs one notification per `BEHIND_S` instead of one per delta
  and text waits at most about `BEHIND_S` for it. A few deltas in one read (a model's pace,
  network batching) still go one by one.

Joined text also goes before any other event (so the order the loop emitted stays the order on
the wire), or when it reaches `limit` characters. Text is only ever concatenated, never dropped,
and the pending text is bounded: past `limit` it goes to the writer, whose own buffer is bounded
(`lsp/pipe_writer.py`: past its limit it blocks, which stops the loop from reading the provider's
stream).
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable, Union

import msgspec

from .protocol import Event, ReasoningDeltaEvent, TextDeltaEvent

Delta = Union[TextDeltaEvent, ReasoningDeltaEvent]
LIMIT_CHARS = 64 * 1024
BEHIND_S = 0.001
BEHIND_AFTER = 16


def _never_busy() -> bool:
    return False


def _next_loop_turn(callback: Callable[[], None]) -> bool:
    """Run `callback` when the running loop next turns; False outside a loop (nothing to wait for)."""
    try:
        asyncio.get_running_loop().call_soon(callback)
    except RuntimeError:
        return False
    return True


class DeltaCoalescer:
    def __init__(self, send: Callable[[Event], None], busy: Callable[[], bool] = _never_busy,
                 limit: int = LIMIT_CHARS, clock: Callable[[], float] = time.monotonic,
                 on_next_turn: Callable[[Callable[[], None]], bool] = _next_loop_turn) -> None:
        self._send = send
        self.busy = busy
        self._limit = limit
        self._clock = clock
        self._on_next_turn = on_next_turn
        self._pending: Delta | None = None
        self._parts: list[str] = []
        self._size = 0
        self._held_since = 0.0
        # The current run of the loop: when its first delta came, and how many went one by one.
        self._run_started: float | None = None
        self._run_sent = 0

    def event(self, event: Event) -> None:
        if isinstance(event, (TextDeltaEvent, ReasoningDeltaEvent)):
            self._delta(event)
            return
        self.flush()
        self._send(event)

    def _delta(self, event: Delta) -> None:
        now = self._clock()
        pending = self._pending
        if pending is not None:
            if (type(pending) is type(event) and pending.sessionId == event.sessionId and pending.turnId == event.turnId
                    and pending.parentToolCallId == event.parentToolCallId):  # a subagent's text is its own
                self._parts.append(event.text)
                self._size += len(event.text)
                if self._size >= self._limit or (not self.busy() and now - self._held_since >= BEHIND_S):
                    self.flush()
                return
            self.flush()
        if self.busy() or self._server_behind(now):
            self._pending, self._parts, self._size, self._held_since = event, [event.text], len(event.text), now
            return
        self._send(event)
        self._run_sent += 1

    def _server_behind(self, now: float) -> bool:
        if self._run_started is None:
            if self._on_next_turn(self._run_ended):
                self._run_started, self._run_sent = now, 0
            return False
        return self._run_sent >= BEHIND_AFTER and now - self._run_started >= BEHIND_S

    def _run_ended(self) -> None:
        self._run_started = None
        if not self.busy():  # while the client is behind, the drain sends it
            self.flush()

    def drained(self) -> None:
        """The output has written everything it held: what waited goes now."""
        self.flush()

    def flush(self) -> None:
        pending, parts = self._pending, self._parts
        if pending is None:
            return
        self._pending, self._parts, self._size = None, [], 0
        self._send(msgspec.structs.replace(pending, text="".join(parts)) if len(parts) > 1 else pending)
