"""The terminal client's wire: one framing (server/model/lsp_framing.py) read the same way by the
asyncio reader and by the thread that sends `shiro -p`'s chat early, and notifications decoded into
protocol.py's Structs, with a newer server's unknown ones dropped instead of breaking the client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from shiro_neko import protocol as wire
from shiro_neko.client import render
from shiro_neko.client.chat_ahead import _initialize_answer
from shiro_neko.client.connection import Connection, ServerGone
from shiro_neko.model.lsp_framing import MAX_HEADER_LINE, MalformedFrame, frame, next_frame
from shiro_neko.client.initialize import INITIALIZE_ID
from shiro_neko.client.jsonrpc import ConnectionLost, JsonRpc


def body(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


ANSWER = body({"jsonrpc": "2.0", "id": INITIALIZE_ID, "result": {"capabilities": {}}})
LOG = body({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "hi"}})

# Frames the server may send: header names in any case, Content-Type beside the length.
GOOD = [
    b"Content-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER),
    b"content-length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER),
    b"CONTENT-LENGTH:%d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s" % (len(ANSWER), ANSWER),
    b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER),
]
# Frames after which the next message's start is unknown, with the reason the connection ends on.
BAD = [
    (b"Content-Type: application/json\r\n\r\n" + ANSWER, "a frame without a Content-Length header"),
    (b"Content-Length: abc\r\n\r\n" + ANSWER, "Content-Length is not a number"),
    (b"Content-Length: -5\r\n\r\n" + ANSWER, "Content-Length is not a number"),
    (b"Content-Length 5\r\n\r\n" + ANSWER, "a header line without a colon"),
    (b"X: " + b"y" * (MAX_HEADER_LINE + 10) + b"\r\n\r\n", "a header line longer than"),
    (b"Content-Length: 999999999999\r\n\r\n", "over the 256 MB limit"),
]


def read_with_jsonrpc(data: bytes) -> tuple[list[str], Any]:
    """Feed `data` to JsonRpc (the asyncio reader): the notifications it saw and how the answer to
    request INITIALIZE_ID ended (its result, or the ConnectionLost)."""

    async def run() -> tuple[list[str], Any]:
        reader = asyncio.StreamReader()
        seen: list[str] = []

        async def serve(method: str, params: Any) -> None:
            return None

        rpc = JsonRpc(reader, None, lambda method, params: seen.append(method), serve, first_id=INITIALIZE_ID)
        answer = rpc.expect(INITIALIZE_ID)
        reader.feed_data(data)
        reader.feed_eof()
        try:
            return seen, await answer
        except ConnectionLost as exc:
            return seen, exc

    return asyncio.run(run())


@pytest.mark.parametrize("good", GOOD, ids=range(len(GOOD)))
def test_both_readers_take_header_names_in_any_case(good: bytes) -> None:
    data = frame(LOG) + good
    assert read_with_jsonrpc(data) == (["window/logMessage"], {"capabilities": {}})
    assert _initialize_answer(data) == json.loads(ANSWER)
    assert _initialize_answer(data[:-1]) is None  # not all there yet


@pytest.mark.parametrize(("bad", "reason"), BAD, ids=range(len(BAD)))
def test_a_malformed_frame_ends_the_connection_with_its_reason(bad: bytes, reason: str) -> None:
    seen, outcome = read_with_jsonrpc(frame(LOG) + bad + frame(ANSWER))
    assert seen == ["window/logMessage"]  # what came before it was read
    assert isinstance(outcome, ConnectionLost), outcome  # nothing after it is guessed at
    assert "malformed LSP frame from the server" in str(outcome) and reason in str(outcome)
    with pytest.raises(MalformedFrame, match=reason):  # the early reader refuses it the same way
        _initialize_answer(frame(LOG) + bad + frame(ANSWER))


def test_input_that_ends_inside_a_frame_is_named() -> None:
    _, outcome = read_with_jsonrpc(b"Content-Length: 99\r\n\r\n{")
    assert "the input ended inside a frame's body (1 of 99 bytes)" in str(outcome)
    _, outcome = read_with_jsonrpc(b"Content-Length: 99\r\n")
    assert "the input ended inside a frame's headers" in str(outcome)


def test_a_well_framed_body_that_is_not_json_is_skipped_by_both_readers() -> None:
    data = frame(b"not json") + frame(ANSWER)
    assert read_with_jsonrpc(data) == ([], {"capabilities": {}})
    assert _initialize_answer(data) == json.loads(ANSWER)


def test_frames_written_are_read_back() -> None:
    data = frame(LOG) + frame(ANSWER)
    first = next_frame(data)
    assert first is not None and first[0] == LOG
    assert next_frame(data, first[1]) == (ANSWER, len(data))


# -- notifications as protocol.py's Structs ----------------------------------------------------

STATUS = {
    "sessionId": "s1", "contextTokens": 10, "contextThreshold": 100, "contextPercent": 10.0, "level": "normal",
    "provider": "p", "model": "fake-model", "inputTokens": 1200, "outputTokens": 3, "costUsd": None,
    "running": True, "queued": 0, "sandbox": {"mode": "workspace-write", "enforced": False, "reason": "no bwrap"},
}


def notify(method: str, params: Any) -> bytes:
    return frame(body({"jsonrpc": "2.0", "method": method, "params": params}))


def test_notifications_reach_the_listeners_as_protocol_structs_and_unknown_ones_are_dropped() -> None:
    events: list[Any] = []
    statuses: list[Any] = []
    todos: list[Any] = []
    conn = Connection(Path.cwd())  # never started: the notifications come from the stream below
    conn.listeners.event, conn.listeners.status, conn.listeners.todos = events.append, statuses.append, todos.append
    event = {"sessionId": "s1", "turnId": "t1"}
    data = b"".join([
        notify(wire.EVENT, {**event, "type": "text_delta", "text": "hel"}),
        notify(wire.EVENT, {**event, "type": "hologram", "beam": 3}),  # a newer server's event
        notify(wire.EVENT, {**event, "type": "tool_call", "toolCallId": "c1", "toolName": "grep",
                            "input": {"pattern": "x"}, "addedLater": True}),  # a field added later
        notify(wire.EVENT, {**event, "type": "tool_result", "toolCallId": "c1"}),  # cannot be read: dropped
        notify(wire.EVENT, "not an object"),
        notify("shiro/newThing", {"x": 1}),  # a newer server's notification
        notify(wire.STATUS_NOTIFICATION, STATUS),
        notify(wire.STATUS_NOTIFICATION, {**STATUS, "contextPercent": "lots"}),
        notify(wire.TODOS_NOTIFICATION, {"sessionId": "s1", "todos": [{"content": "a", "status": "pending"}],
                                         "rendered": "[ ] a", "warnings": []}),
        notify(wire.EVENT, {**event, "type": "turn_end", "status": "completed", "text": "hello"}),
        frame(ANSWER),
    ])
    assert read_with_jsonrpc_into(conn, data) == {"capabilities": {}}
    assert events == [
        wire.TextDeltaEvent("s1", "t1", "hel"),
        wire.ToolCallEvent("s1", "t1", "c1", "grep", {"pattern": "x"}),
        wire.TurnEndEvent("s1", "t1", "completed", "hello"),
    ]
    assert [type(s) for s in statuses] == [wire.StatusPayload] and statuses[0].sandbox.reason == "no bwrap"
    assert len(todos) == 1 and todos[0].todos[0].content == "a"
    tools = render.ToolNames()
    assert render.event_lines(events[1], tools) == [[("dim", "→ grep x")]]
    result = wire.ToolResultEvent("s1", "t1", "c1", "a.py:1: x\nb.py:2: x", False)
    assert render.event_lines(result, tools) == [[("dim", "  ✓ grep: 2 lines")]]
    assert render.gauge(statuses[0]) == ("green", "ctx 10.0%")
    assert render.cost_text(statuses[0]) == "↑1.2k ↓3 $?"
    assert render.sandbox_badge(statuses[0]) == ("red", "  sandbox workspace-write NOT enforced")


def read_with_jsonrpc_into(conn: Connection, data: bytes) -> Any:
    async def run() -> Any:
        reader = asyncio.StreamReader()
        rpc = JsonRpc(reader, None, conn._on_notify, conn._on_request, first_id=INITIALIZE_ID)
        answer = rpc.expect(INITIALIZE_ID)
        reader.feed_data(data)
        reader.feed_eof()
        return await answer

    return asyncio.run(run())


def test_after_a_malformed_frame_a_command_names_it() -> None:
    async def run() -> str:
        conn = Connection(Path.cwd())  # never started: the stream below is the server's output
        reader = asyncio.StreamReader()
        conn.rpc = JsonRpc(reader, None, conn._on_notify, conn._on_request)
        reader.feed_data(b"Content-Length: ten\r\n\r\n{}")
        reader.feed_eof()
        await conn.rpc.closed()
        with pytest.raises(ServerGone) as gone:
            await conn.status()
        return str(gone.value)

    assert asyncio.run(run()).startswith(
        "the language server is not running (malformed LSP frame from the server (Content-Length is not a number: b'ten'))")
