"""The pygls internals `lsp/pygls_overrides.py` relies on are still there, in the shape it expects.

A pygls upgrade that renames or reshapes any of them fails here, instead of silently turning a
workaround into a no-op (a cancelled chat that keeps running, a future leak, a failing shutdown).
"""

from __future__ import annotations

import asyncio
import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from shiro_neko.lsp import create_server
from shiro_neko.lsp.pygls_overrides import ShiroProtocol

ROOT = Path(__file__).resolve().parents[2]


def _params(fn: Any) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_pygls_is_the_tested_minor_and_pinned_to_it() -> None:
    assert version("pygls").startswith("2.1."), "the overrides were written against pygls 2.1; re-check them"
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pin = next(d for d in deps if d.startswith("pygls"))
    assert "<2.2" in pin, pin


def test_overridden_methods_exist_upstream_with_the_same_signature() -> None:
    for name in ("_handle_cancel_notification", "_execute_handler", "_handle_response"):
        upstream = getattr(JsonRPCProtocol, name, None)
        assert upstream is not None, f"pygls no longer has JsonRPCProtocol.{name}"
        assert _params(upstream) == _params(getattr(ShiroProtocol, name)), name
    assert _params(JsonRPCProtocol._handle_cancel_notification) == ["self", "msg_id"]
    assert _params(JsonRPCProtocol._execute_handler) == ["self", "msg_id", "handler", "callback", "args", "kwargs"]
    assert _params(JsonRPCProtocol._handle_response) == ["self", "msg_id", "result", "error"]


def test_the_server_uses_the_overrides_and_the_state_they_touch() -> None:
    server = create_server()
    protocol = server.protocol
    assert isinstance(protocol, ShiroProtocol) and isinstance(protocol, LanguageServerProtocol)
    assert isinstance(protocol._request_futures, dict)
    assert protocol._server is server and callable(server.cancel_request)
    # Override 3 exists because pygls' shutdown walks this dict while cancelling.
    assert "_request_futures" in inspect.getsource(LanguageServerProtocol.lsp_shutdown)


async def test_finished_futures_are_dropped_and_cancel_reaches_the_server() -> None:
    server = create_server()
    protocol = server.protocol
    cancelled: list[Any] = []
    server.cancel_request = cancelled.append  # type: ignore[method-assign]

    async def handler() -> str:
        return "done"

    protocol._execute_handler("req-1", handler, lambda f: None)
    assert "req-1" in protocol._request_futures
    for _ in range(5):
        await asyncio.sleep(0)
    assert "req-1" not in protocol._request_futures

    protocol._handle_cancel_notification("req-2")  # unknown to pygls: still reaches the server
    assert cancelled == ["req-2"]


def test_the_io_loop_pieces_serve_io_reuses_are_there() -> None:
    from pygls import io_

    assert _params(io_.run_async)[:3] == ["stop_event", "reader", "protocol"]
    assert _params(io_.StdinAsyncReader) == ["stdin", "executor"]
    assert _params(JsonRPCProtocol._send_data) == ["self", "data"]
    assert _params(JsonRPCProtocol.set_writer)[:2] == ["self", "writer"]


class _Capture:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)


def _split(frame: bytes) -> tuple[dict[str, str], bytes]:
    head, _, body = frame.partition(b"\r\n\r\n")
    headers = dict(line.decode("ascii").split(": ", 1) for line in head.split(b"\r\n"))
    return headers, body


def test_notify_struct_sends_the_frame_pygls_would_send() -> None:
    """Override 6: msgspec's frame carries the same JSON value and headers as pygls's own `notify`."""
    import json

    import msgspec

    from shiro_neko import protocol as wire

    server = create_server()
    protocol = server.protocol
    assert isinstance(protocol, ShiroProtocol)
    # The pygls state notify_struct reads, as _send_data does.
    assert protocol._include_headers is False and protocol.writer is None
    assert isinstance(protocol.CONTENT_TYPE, str) and protocol.CHARSET == "utf-8"
    assert callable(server._report_server_error)
    ours, theirs = _Capture(), _Capture()
    payloads: list[tuple[str, msgspec.Struct]] = [
        (wire.EVENT, wire.TextDeltaEvent(sessionId="s", turnId="t", text="naïve 猫 \"quoted\"\n\u2028 😺")),
        (wire.EVENT, wire.ToolCallEvent(sessionId="s", turnId="t", toolCallId="c", toolName="read_file",
                                        input={"path": "a.txt", "n": [1, 2.5, None, True]})),
        (wire.EVENT, wire.TurnEndEvent(sessionId="s", turnId="t", status="completed", text="done")),
    ]
    for method, payload in payloads:
        protocol.set_writer(ours)
        protocol.notify_struct(method, payload)
        protocol.set_writer(theirs)
        protocol.notify(method, msgspec.to_builtins(payload))
    assert len(ours.frames) == len(theirs.frames) == len(payloads)
    for mine, upstream in zip(ours.frames, theirs.frames):
        my_headers, my_body = _split(mine)
        their_headers, their_body = _split(upstream)
        assert my_headers.keys() == their_headers.keys()
        assert my_headers["Content-Type"] == their_headers["Content-Type"]
        assert int(my_headers["Content-Length"]) == len(my_body)  # bytes, as the LSP base protocol counts
        assert json.loads(my_body) == json.loads(their_body)
        assert list(json.loads(my_body)) == list(json.loads(their_body))  # same keys, same order


def test_notify_struct_sends_held_text_first() -> None:
    server = create_server()
    protocol = server.protocol
    assert isinstance(protocol, ShiroProtocol)
    sent: list[str] = []
    protocol.set_writer(_Capture())
    protocol.before_send = lambda: sent.append("held text")
    from shiro_neko import protocol as wire

    protocol.notify_struct(wire.EVENT, wire.NoticeEvent(sessionId="s", turnId="t", message="m"))
    assert sent == ["held text"]


def test_the_internals_the_helpers_reach_are_there() -> None:
    """forget_request, new_stop_event, kept_document and drop_document (the rest of lsp/ reaches
    pygls internals only through them): the attributes they touch still mean what they did."""
    from lsprotocol import types
    from pygls.server import JsonRPCServer
    from pygls.workspace import Workspace

    from shiro_neko.lsp.pygls_overrides import drop_document, forget_request, kept_document, new_stop_event

    server = create_server()
    protocol = server.protocol
    protocol._request_futures["req-9"] = object()
    forget_request(protocol, "req-9")
    assert "req-9" not in protocol._request_futures
    # pygls's reader loops stop on this flag and `shutdown` sets it.
    stop = new_stop_event(server)
    assert server._stop_event is stop
    assert "_stop_event" in inspect.getsource(JsonRPCServer.shutdown)

    workspace = Workspace(None)
    uri = "file:///tmp/a.py"
    workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="python", version=1, text="x = 1\n"))
    assert kept_document(workspace, uri) is workspace.get_text_document(uri)
    drop_document(workspace, uri)
    assert kept_document(workspace, uri) is None
