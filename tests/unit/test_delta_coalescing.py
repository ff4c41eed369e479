"""Deltas that arrive within one event-loop step go out as one event; nothing is lost or reordered."""

from __future__ import annotations

import asyncio
from typing import Any

from shiro_neko.delta_coalescing import DeltaCoalescer


def delta(text: str, kind: str = "text_delta", turn: str = "t1") -> dict[str, Any]:
    return {"sessionId": "s", "turnId": turn, "type": kind, "text": text}


async def test_a_burst_is_joined_and_a_trickle_is_not() -> None:
    sent: list[dict[str, Any]] = []
    sink = DeltaCoalescer(sent.append)
    for piece in ("a", "b", "c"):  # one burst: no loop step between them
        sink.event(delta(piece))
    assert sent == []
    await asyncio.sleep(0)
    assert sent == [delta("abc")]
    sink.event(delta("d"))
    await asyncio.sleep(0)
    sink.event(delta("e"))
    await asyncio.sleep(0)
    assert [e["text"] for e in sent] == ["abc", "d", "e"]


async def test_other_events_flush_first_and_kinds_never_mix() -> None:
    sent: list[dict[str, Any]] = []
    sink = DeltaCoalescer(sent.append)
    sink.event(delta("think", "reasoning_delta"))
    sink.event(delta("x"))
    sink.event(delta("y"))
    sink.event(delta("z", turn="t2"))
    sink.event({"sessionId": "s", "turnId": "t2", "type": "tool_call", "name": "read"})
    sink.event(delta("after"))
    await asyncio.sleep(0)
    assert [(e["type"], e.get("text")) for e in sent] == [
        ("reasoning_delta", "think"), ("text_delta", "xy"), ("text_delta", "z"), ("tool_call", None), ("text_delta", "after")]


async def test_ten_thousand_deltas_keep_every_character() -> None:
    sent: list[dict[str, Any]] = []
    sink = DeltaCoalescer(sent.append)
    pieces = [f"{i} " for i in range(10_000)]
    for n, piece in enumerate(pieces):
        sink.event(delta(piece))
        if n % 7 == 0:
            await asyncio.sleep(0)
    sink.flush()
    assert "".join(e["text"] for e in sent) == "".join(pieces)
    assert len(sent) < len(pieces)
