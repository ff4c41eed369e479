r"""Every override of pygls internals, in one place; pygls is pinned to the tested minor (2.1).

Each one names the pygls behaviour it works around (measured in pygls 2.1.1, see the shared
pygls notes) and the upstream issue where one exists. `tests/unit/test_pygls_overrides.py` fails
when an upgrade renames or reshapes the internals relied on here, so a pygls bump cannot silently
turn a workaround into a no-op.

1. `$/cancelRequest` answers the client (-32800) but leaves the `workspace/executeCommand`
   coroutine running, because pygls schedules the user coroutine as a task of its own under a
   random id (upstream: openlawlibrary/pygls#517 covers the related "cancelled requests are still
   handled"; none yet for executeCommand's inner task). Override: `_handle_cancel_notification`
   also tells the server, which aborts the turn that request started.
2. Finished futures are never removed from `_request_futures` (one per async command and per
   notification a built-in generator handles), so the dict grows for the life of the server
   (upstream: openlawlibrary/pygls#608 is the same leak for `_result_types`). Override:
   `_execute_handler` drops each future once it is done.
3. `lsp_shutdown` iterates `_request_futures` while cancelling, and a cancelled future's callback
   pops from it: "dictionary changed size during iteration" answers `shutdown` with -32603. The
   drop in 2. is deferred with `call_soon` for that reason, and the `shutdown` handler ends the
   running turns before pygls cancels anything (`lsp/server.py`).
4. A request whose params do not fit its method (`workspace/executeCommand` with params `[1, 2]`)
   makes `structure_message` raise out of the reader loop, which logs it and reads on: the request
   is never answered and the client waits for ever (no upstream issue found). Override:
   `structure_message` answers it with -32602 naming what did not fit, then re-raises as before
   (`tests/lsp/test_fuzz.py::test_params_that_do_not_fit_get_a_clear_error`).
5. `start_io` writes with `StdoutWriter`, a blocking write and flush on the event loop: a client
   slow to read stalls the whole server, and streamed deltas cannot be joined while a write waits.
   Override: `serve_io` is pygls's `_start_io_async` with `lsp/pipe_writer.PipeWriter` (non-blocking,
   bounded) when stdout is a pipe or a socket; it reuses pygls's `StdinAsyncReader` and `run_async`.
   `_send_data` first runs `before_send` (the sink sends streamed text it still holds), so a
   response or request never overtakes text emitted before it.
6. `notify` builds an attrs `JsonRPCNotification`, which `_send_data` turns into JSON with
   `json.dumps(default=cattrs unstructure)`: for our `shiro/*` notifications, whose params are
   msgspec Structs, that walk costs more per message than everything else the server does for a
   streamed delta. `notify_struct` encodes the Struct with msgspec straight into the frame pygls
   would write (same keys, same values, same headers; Content-Length counts the UTF-8 bytes), and
   goes through the same `before_send`, writer and error handling as `_send_data`.
7. pygls's `run_async` matches `Content-Length: (\d+)\r\n` exactly: a lowercase `content-length`
   or `Content-Length: abc` is skipped as an unknown header, so every later frame is misread and
   the server never answers again, silently; a header line is read without a length limit. Override:
   `serve_io` reads with `read_frames`: header names case-insensitive (as HTTP's, which LSP's
   base protocol copies), lines and bodies bounded, and a malformed frame is logged with the reason
   and ends the connection (docs/protocol.md, "Malformed frames"): a client that cannot frame
   messages cannot be understood again, and a closed pipe is an error it sees at once.
8. A response to a server request whose awaiting task was cancelled (an approval dialog open when
   the user aborted the turn: the terminal's Esc) reaches `_handle_response`, which calls
   `set_result` on the cancelled future; the InvalidStateError escapes into the reader loop and
   pygls shows the client "Error in server: CANCELLED: <Future …>" (no upstream issue found).
   Override: `_handle_response` drops a response whose future is already done, as it does one
   to an unknown id (`tests/clients/test_terminal.py::test_esc_during_an_approval_aborts_without_a_server_error`).
9. Not a pygls defect: `shiro-lsp` answers `initialize` from a stdlib front before pygls is
   imported (server/startup/lsp_front.py), then replays that request to pygls so its state is what it
   always was. `_send_response` drops pygls's second answer to that id (logging an error if it
   differs from the front's, which tests/lsp/test_front.py rules out for every plain client).

Besides the overrides, the few pygls internals the rest of `lsp/` needs are reached only here
(tests/unit/test_architecture.py checks that no other module names a private pygls attribute or
imports an internal pygls module): `forget_request` (a server request whose awaiting task was
cancelled: pygls keeps its future), `new_stop_event` (the reader loop's stop flag, which
`start_io`/`start_tcp` set up and `serve_io`/`lsp/tcp_guard.py` replace) and the open-document
table of `lsp/open_documents.py` (`kept_document`, `drop_document`), and `order_commands` (the
registered commands in protocol.COMMANDS's order, for server/commands/__init__.py).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import sys
import threading
from typing import Any, BinaryIO, Callable, Sequence

import msgspec
from cattrs import transform_error
from pygls.io_ import StdinAsyncReader
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

# The framing of override 7 is written once, for the stdlib-only front that answers `initialize`
# before pygls is imported, these readers and the terminal client (server/model/lsp_framing.py).
from ..model.lsp_framing import MALFORMED, MAX_BODY_BYTES, MAX_HEADER_LINE, MAX_HEADER_LINES, Headers, MalformedFrame, check_body

__all__ = ["MAX_BODY_BYTES", "MAX_HEADER_LINE", "MAX_HEADER_LINES", "MalformedFrame", "drop_document",
           "forget_request", "kept_document", "new_stop_event", "read_content_length", "read_frames", "serve_io",
           "ShiroProtocol"]


_json = msgspec.json.Encoder()
log = logging.getLogger(__name__)


class ShiroProtocol(LanguageServerProtocol):
    before_send: Callable[[], None] | None = None
    # (request id, result) of the `initialize` the front answered before pygls was imported
    # (server/startup/lsp_front.py, override 9): pygls handles that request again and must not answer twice.
    front_answered: tuple[Any, dict[str, Any]] | None = None

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        answered = self.front_answered
        if answered is not None and answered[0] == msg_id and type(answered[0]) is type(msg_id):
            self.front_answered = None
            self._result_types.pop(msg_id, None)
            ours = self._converter.unstructure(result) if error is None else error
            if ours != answered[1]:  # tests/lsp/test_front.py keeps them equal for every plain client
                log.error("the front answered initialize with %s; pygls would have answered %s", answered[1], ours)
            return
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        if self.before_send is not None:
            self.before_send()
        super()._send_data(data)

    def notify_struct(self, method: str, params: msgspec.Struct) -> None:
        """`notify(method, to_builtins(params))` without pygls's converter and json.dumps (override 6)."""
        if self.before_send is not None:
            self.before_send()
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        body = b'{"method":%s,"jsonrpc":"2.0","params":%s}' % (_json.encode(method), _json.encode(params))
        if self._include_headers:
            head = b"Content-Length: %d\r\nContent-Type: %s; charset=%s\r\n\r\n" % (
                len(body), self.CONTENT_TYPE.encode(), self.CHARSET.encode())
            body = head + body
        try:
            written = self.writer.write(body)
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)
        except BrokenPipeError:
            raise
        except Exception as error:  # as pygls's _send_data: reported, the server carries on
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    def _handle_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():  # cancelled while the client answered (override 8)
            del self._request_futures[msg_id]
            log.debug("late answer to %s: its request was cancelled", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        super()._handle_cancel_notification(msg_id)  # the client gets -32800 at once
        cancel = getattr(self._server, "cancel_request", None)
        if cancel is not None:
            cancel(msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id = data.get("id") if isinstance(data, dict) else None
            if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) and isinstance(data.get("method"), str):
                error = exc
                if isinstance(exc, JsonRpcInvalidParams):
                    cause = exc.__cause__
                    detail = "; ".join(transform_error(cause)) if cause is not None else ""
                    error = JsonRpcInvalidParams(f"invalid params for {data['method']}: {detail or 'they do not fit the method'}")
                self._send_response(msg_id, error=error.to_response_error())
            raise

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        # A finished future needs no cancelling, so drop it (override 2).
        future = self._request_futures.get(msg_id)
        if future is not None:

            def forget(done: Any, msg_id: Any = msg_id) -> None:
                self._forget_future(msg_id, done)

            future.add_done_callback(forget)

    def _forget_future(self, msg_id: Any, future: Any) -> None:
        # Deferred: `shutdown` iterates this dict while cancelling, and cancelling runs callbacks.
        asyncio.get_event_loop().call_soon(self._pop_if_same, msg_id, future)

    def _pop_if_same(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]


def forget_request(protocol: Any, msg_id: Any) -> None:
    """Drop the future of a request we sent and no longer wait for: pygls keeps it in
    `_request_futures` until an answer comes, which after a cancel may be never."""
    protocol._request_futures.pop(msg_id, None)


def new_stop_event(server: Any) -> threading.Event:
    """The flag pygls's reader loop stops on (`JsonRPCServer._stop_event`, set by `shutdown`):
    made here as `start_io`/`start_tcp` would make it."""
    event = threading.Event()
    server._stop_event = event
    return event


def kept_document(workspace: Any, uri: str) -> Any | None:
    """The text document pygls keeps for `uri` (its `_text_documents` table), or None."""
    return workspace._text_documents.get(uri)


def drop_document(workspace: Any, uri: str) -> None:
    """Remove `uri` from pygls's open-document table (the document stays open in the editor)."""
    workspace._text_documents.pop(uri, None)


def order_commands(server: Any, names: Sequence[str]) -> None:
    """Reorder pygls's registered commands (its `FeatureManager._commands` dict, the only handle
    pygls 2.1 gives on the order `executeCommandProvider` lists them in) into `names`' order; a
    command not in `names` goes last. The LSP front answers `initialize` in protocol.COMMANDS's
    order before pygls is imported (server/startup/lsp_front.py), so pygls must list the same."""
    fm = server.protocol.fm
    order = {name: i for i, name in enumerate(names)}
    fm._commands = dict(sorted(fm._commands.items(), key=lambda item: order.get(item[0], len(order))))


def server_capabilities(server: Any, client_capabilities: Any) -> Any:
    """The ServerCapabilities pygls answers `initialize` with for these client capabilities, built
    as `LanguageServerProtocol.lsp_initialize` builds them (`ServerCapabilitiesBuilder` over the
    registered features and commands and the server's private sync kinds). For the warm server's
    codec warm-up (server/startup/warm.py), which encodes that answer once before it forks."""
    from pygls.capabilities import ServerCapabilitiesBuilder

    fm = server.protocol.fm
    return ServerCapabilitiesBuilder(
        client_capabilities, set({**fm.features, **fm.builtin_features}.keys()), fm.feature_options,
        list(fm.commands.keys()), server._text_document_sync_kind, server._notebook_document_sync,
        ServerCapabilitiesBuilder.choose_position_encoding(client_capabilities),
    ).build()


def encode_message(protocol: Any, message: Any) -> str:
    """`message` as the JSON pygls's `_send_data` writes (its `_serialize_message` hook as
    json.dumps's default); for the warm server's codec warm-up (server/startup/warm.py)."""
    return json.dumps(message, default=protocol._serialize_message)


class BoundedStdinReader(StdinAsyncReader):
    """pygls's reader with a length limit on each header line."""

    def readline(self) -> Any:
        return self.loop.run_in_executor(self.executor, self.stdin.readline, MAX_HEADER_LINE + 1)


async def read_content_length(reader: Any) -> int | None:
    """The Content-Length of the next frame after reading its headers; None at the end of input."""
    headers = Headers()
    while True:
        line: bytes = await reader.readline()
        length = headers.feed(line)
        if length is not None or not line:
            return length


async def read_frames(stop_event: threading.Event, reader: Any, protocol: Any, logger: logging.Logger,
                      error_handler: Callable[[Exception, Any], Any]) -> None:
    """pygls's `run_async` with the framing of override 7; returns when the connection must close."""
    while not stop_event.is_set():
        try:
            length = await read_content_length(reader)
            if length is None:
                return
            body = await reader.readexactly(length) if length else b""
            check_body(body, length)
        except MalformedFrame as exc:
            logger.error(MALFORMED, exc)
            return
        try:
            protocol.handle_message(json.loads(body, object_hook=protocol.structure_message))
        except Exception as exc:  # as pygls: a bad message is reported, the next frame is read
            logger.exception("Unable to handle message")
            error_handler(exc, JsonRpcException)


def serve_io(server: Any, on_writer: Callable[[Any], None], stdin: Any = None,
             stdout: BinaryIO | None = None) -> None:
    """`server.start_io()` with a writer that never blocks the loop (override 5) and the framing of
    override 7."""
    from pygls.io_ import StdoutWriter

    from . import pipe_writer

    out = stdout or sys.stdout.buffer
    stop = new_stop_event(server)
    reader = BoundedStdinReader(stdin or sys.stdin.buffer, server.thread_pool)

    async def serve() -> None:
        piped = pipe_writer.suits(out)
        # A file or a terminal: pygls's blocking writer, as `start_io` would use.
        writer: Any = pipe_writer.PipeWriter(out, asyncio.get_running_loop()) if piped else StdoutWriter(out)
        server.protocol.set_writer(writer)
        if piped:
            on_writer(writer)
        try:
            await read_frames(stop, reader, server.protocol, logging.getLogger("pygls.server"),
                              server.report_server_error)
        finally:
            finish = getattr(writer, "finish", None)
            if finish is not None:
                finish()

    try:
        asyncio.run(serve())
    except BrokenPipeError:
        logging.getLogger(__name__).error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
