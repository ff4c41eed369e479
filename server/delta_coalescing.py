"""Streamed text reaches the editor as fast as it can take it, and never more than that.

A `text_delta` / `reasoning_delta` event is not written at once: it waits for the end of the
current event-loop step, and the deltas of the same kind, session and turn that arrive meanwhile
join it. A client that keeps up sees one notification per network read (latency: one loop step);
a slower one makes the server's writes block, during which the provider's stream piles up in its
socket buffer, and the next step sends what piled up as one notification. Text is only ever
concatenated, never dropped, and any other event sends the pending text first, so the order the
loop emitted stays the order on the wire.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

COALESCED = ("text_delta", "reasoning_delta")


class DeltaCoalescer:
    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._pending: dict[str, Any] | None = None
        self._parts: list[str] = []
        self._scheduled = False

    def event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind in COALESCED and isinstance(payload.get("text"), str):
            pending = self._pending
            if pending is not None and all(pending.get(k) == payload.get(k) for k in ("type", "sessionId", "turnId")):
                self._parts.append(payload["text"])
                return
            self.flush()
            self._pending, self._parts = payload, [payload["text"]]
            self._schedule()
            return
        self.flush()
        self._send(payload)

    def _schedule(self) -> None:
        if self._scheduled:
            return
        try:
            asyncio.get_running_loop().call_soon(self._on_tick)
            self._scheduled = True
        except RuntimeError:  # no loop (after it ended): nothing to wait for
            self.flush()

    def _on_tick(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        pending, parts = self._pending, self._parts
        if pending is None:
            return
        self._pending, self._parts = None, []
        self._send({**pending, "text": "".join(parts)} if len(parts) > 1 else pending)
