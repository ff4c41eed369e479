"""Deltas go out at once while the output is idle and are joined only while a write is pending;
nothing is lost or reordered, and both the pending text and the writer's buffer are bounded."""

from __future__ import annotations

import asyncio
import os
import threading

from shiro_neko.delta_coalescing import DeltaCoalescer
from shiro_neko.lsp.pipe_writer import PipeWriter
from shiro_neko.protocol import Event, ReasoningDeltaEvent, TextDeltaEvent, ToolCallEvent


def delta(text: str, turn: str = "t1") -> TextDeltaEvent:
    return TextDeltaEvent(sessionId="s", turnId=turn, text=text)


def texts(sent: list[Event]) -> list[tuple[str, str | None]]:
    return [(type(e).__name__, getattr(e, "text", None)) for e in sent]


def test_an_idle_output_gets_every_delta_at_once() -> None:
    sent: list[Event] = []
    sink = DeltaCoalescer(sent.append, busy=lambda: False)
    for piece in ("a", "b", "c"):
        sink.event(delta(piece))
        assert sent[-1] == delta(piece)
    assert len(sent) == 3


def test_a_pending_write_joins_deltas_until_it_drains() -> None:
    sent: list[Event] = []
    busy = [True]
    sink = DeltaCoalescer(sent.append, busy=lambda: busy[0])
    for piece in ("a", "b", "c"):
        sink.event(delta(piece))
    assert sent == []
    busy[0] = False
    sink.drained()
    assert sent == [delta("abc")]
    sink.event(delta("d"))
    assert sent[-1] == delta("d")


def test_other_events_flush_first_and_kinds_and_turns_never_mix() -> None:
    sent: list[Event] = []
    sink = DeltaCoalescer(sent.append, busy=lambda: True)
    sink.event(ReasoningDeltaEvent(sessionId="s", turnId="t1", text="think"))
    sink.event(delta("x"))
    sink.event(delta("y"))
    sink.event(delta("z", turn="t2"))
    sink.event(ToolCallEvent(sessionId="s", turnId="t2", toolCallId="c1", toolName="read_file", input={}))
    sink.event(delta("after"))
    sink.flush()
    assert texts(sent) == [("ReasoningDeltaEvent", "think"), ("TextDeltaEvent", "xy"), ("TextDeltaEvent", "z"),
                           ("ToolCallEvent", None), ("TextDeltaEvent", "after")]


def test_pending_text_is_bounded_and_every_character_kept() -> None:
    sent: list[Event] = []
    sink = DeltaCoalescer(sent.append, busy=lambda: True, limit=100)
    pieces = [f"{i} " for i in range(10_000)]
    for piece in pieces:
        sink.event(delta(piece))
    assert all(len(e.text) < 100 + 8 for e in sent if isinstance(e, TextDeltaEvent))
    sink.flush()
    assert "".join(e.text for e in sent if isinstance(e, TextDeltaEvent)) == "".join(pieces)


async def test_the_writer_is_pending_while_the_pipe_is_full_and_says_when_it_drained() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, "wb") as out:
        writer = PipeWriter(out, asyncio.get_running_loop(), limit=1 << 30)
        drained = asyncio.Event()
        writer.on_drained = drained.set
        writer.write(b"x" * 10)
        assert not writer.pending  # the pipe took it: nothing waits
        block = b"y" * (1 << 20)  # more than a pipe holds
        writer.write(block)
        assert writer.pending
        got = bytearray()

        def read_all() -> None:
            while len(got) < 10 + len(block):
                got.extend(os.read(read_fd, 1 << 16))

        reader = asyncio.ensure_future(asyncio.to_thread(read_all))
        await asyncio.wait_for(drained.wait(), 30)
        await reader
        assert not writer.pending and bytes(got) == b"x" * 10 + block
        writer.finish()
    os.close(read_fd)


async def test_the_writer_blocks_past_its_limit_instead_of_growing() -> None:
    read_fd, write_fd = os.pipe()
    got = bytearray()
    total = 4 << 20

    def read_slowly() -> None:
        while len(got) < total:
            got.extend(os.read(read_fd, 1 << 16))

    with os.fdopen(write_fd, "wb") as out:
        writer = PipeWriter(out, asyncio.get_running_loop(), limit=256 * 1024)
        thread = threading.Thread(target=read_slowly)
        thread.start()
        peak = 0
        for _ in range(total // 4096):
            writer.write(b"z" * 4096)
            peak = max(peak, len(writer._buffer))
        writer.finish()
        thread.join(30)
    os.close(read_fd)
    assert bytes(got) == b"z" * total
    assert peak <= 256 * 1024 + 4096


class _Run:
    """A stand-in for the event loop: a clock, and the callbacks due when the loop next turns."""

    def __init__(self) -> None:
        self.now = 0.0
        self.due: list[object] = []

    def clock(self) -> float:
        return self.now

    def on_next_turn(self, callback: object) -> bool:
        self.due.append(callback)
        return True

    def turn(self) -> None:
        due, self.due = self.due, []
        for callback in due:
            callback()  # type: ignore[operator]


def test_a_few_deltas_in_one_read_still_go_one_by_one_however_slow() -> None:
    sent: list[Event] = []
    run = _Run()
    sink = DeltaCoalescer(sent.append, clock=run.clock, on_next_turn=run.on_next_turn)
    for piece in ("Hello ", "there, ", "friend"):
        run.now += 0.5  # even a slow (loaded) server joins nothing for a handful of deltas
        sink.event(delta(piece))
    run.turn()
    assert texts(sent) == [("TextDeltaEvent", "Hello "), ("TextDeltaEvent", "there, "), ("TextDeltaEvent", "friend")]


def test_a_server_behind_joins_the_backlog_and_sends_it_when_the_run_ends() -> None:
    from shiro_neko.delta_coalescing import BEHIND_AFTER, BEHIND_S

    sent: list[Event] = []
    run = _Run()
    sink = DeltaCoalescer(sent.append, clock=run.clock, on_next_turn=run.on_next_turn)
    pieces = [f"{i} " for i in range(200)]
    for piece in pieces:  # one network read's worth, parsed in one run of the loop
        run.now += BEHIND_S / 20
        sink.event(delta(piece))
    sent_during_run = len(sent)
    run.turn()  # the run ends: what is held goes
    assert "".join(e.text for e in sent) == "".join(pieces)  # type: ignore[attr-defined]
    assert BEHIND_AFTER < sent_during_run < len(sent) < len(pieces)
    assert all(e == delta(p) for e, p in zip(sent[:BEHIND_AFTER], pieces))  # the first ones at once
    # Held text never waited more than BEHIND_S for the next notification within the run.
    assert len(sent) >= len(pieces) / 20
    # The next run starts afresh: its first deltas go one by one again.
    sink.event(delta("next"))
    assert sent[-1] == delta("next")


def test_server_behind_text_waits_for_a_pending_write_to_drain() -> None:
    from shiro_neko.delta_coalescing import BEHIND_AFTER

    sent: list[Event] = []
    run = _Run()
    busy = [False]
    sink = DeltaCoalescer(sent.append, busy=lambda: busy[0], clock=run.clock, on_next_turn=run.on_next_turn)
    for i in range(BEHIND_AFTER):
        sink.event(delta(f"{i},"))
    busy[0] = True  # the client stopped reading
    run.now += 1.0
    sink.event(delta("x"))
    sink.event(delta("y"))
    run.turn()
    assert len(sent) == BEHIND_AFTER  # held: the output is still busy
    busy[0] = False
    sink.drained()
    assert sent[-1] == delta("xy")
