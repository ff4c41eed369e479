"""`shiro-lsp --tcp`: only the client holding this start's secret is served (issue 35 item 2).

pygls's own `start_tcp` served whoever connected: any local process, another user's included,
could send `initialize` with its own endpoint and `approvals: auto` and run commands as us; a web
page's `fetch('http://127.0.0.1:2087', {method: 'POST', mode: 'no-cors', body})` was read as LSP
(pygls skips every header but Content-Length); and every new connection took the writer over,
and its end shut the server down, so a port probe ended the editor's session.

Here:
- A secret per start (`server/tcp_secret.py`: a random token in a 0600 file in a 0700 directory, or the
  user's own through `--token-file` or SHIRO_LSP_TOKEN). The first message of a connection must
  be `initialize` carrying it as `initializationOptions.authToken` (any LSP client can set
  initialization options), compared in constant time. Anything else, or nothing within
  AUTH_TIMEOUT_S, closes the connection with nothing handled: pygls never sees the bytes. The
  token is taken out of the options before pygls reads them, so no setting or log carries it.
- A first line that reads as an HTTP request line is refused before anything else is read.
- One session per start: once a connection is served, every later one is closed at once; it
  never gets the writer and its end does not end the server. Connections still proving
  themselves do not block each other (a silent one only costs itself its timeout), at most
  MAX_PENDING at a time; one more closes the oldest of them. Refusing the newest instead let
  any local process (another user's too) keep the editor out for good by holding MAX_PENDING
  silent connections and opening a new one as each timed out; a real client sends `initialize`
  as it connects, so it proves itself long before eight later connections push it out.
- The served connection is read with the stdio path's framing (`pygls_overrides.read_frames`)
  and written with its non-blocking writer (`pipe_writer.PipeWriter`, on a duplicate of the
  socket's descriptor), so TCP streams exactly as stdio does. Its end ends the server, as
  pygls's did and as the end of stdin does.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import signal
import sys
import threading
from typing import Any, Callable

from pygls.exceptions import JsonRpcException

from ..model.lsp_framing import MAX_HEADER_LINE, Headers, MalformedFrame, check_body
from .pygls_overrides import new_stop_event, read_frames

log = logging.getLogger(__name__)

TOKEN_OPTION = "authToken"
AUTH_TIMEOUT_S = 10.0
MAX_PENDING = 8
MAX_FIRST_BODY = 1 << 20  # an `initialize` is a few kB: an unproven peer gets no 256 MB buffer
_HTTP_METHODS = (b"GET ", b"POST ", b"PUT ", b"HEAD ", b"OPTIONS ", b"DELETE ", b"PATCH ", b"CONNECT ", b"TRACE ")


class Refused(Exception):
    """Why a connection was closed before anything of it was handled."""


def looks_like_http(line: bytes) -> bool:
    """An HTTP request line (`POST / HTTP/1.1`): what a browser's fetch sends first."""
    return line.lstrip().upper().startswith(_HTTP_METHODS) or b" HTTP/" in line.upper()


class _Bounded:
    """A StreamReader as `read_frames` reads it: an over-long header line and a body cut short are
    malformed frames (ends of the connection), not exceptions out of the loop."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        try:
            return await self._reader.readline()
        except ValueError:  # the StreamReader's limit is MAX_HEADER_LINE + 1
            raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes") from None

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial  # check_body names it


async def first_message(reader: _Bounded, token: str) -> dict[str, Any]:
    """The connection's `initialize`, with the token checked and taken out of its options.
    Raises Refused (or MalformedFrame) for anything else."""
    headers = Headers()
    line = await reader.readline()
    if looks_like_http(line):
        raise Refused("an HTTP request, not an LSP client")
    length = headers.feed(line)
    while length is None:
        if not line:
            raise Refused("closed before initialize")
        line = await reader.readline()
        length = headers.feed(line)
    if length > MAX_FIRST_BODY:
        raise Refused(f"a first message of {length} bytes")
    body = await reader.readexactly(length)
    check_body(body, length)
    try:
        data = json.loads(body)
    except ValueError:
        raise Refused("a first message that is not JSON") from None
    if not isinstance(data, dict) or data.get("method") != "initialize" or "id" not in data:
        raise Refused("the first message is not initialize")
    params = data.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    presented = options.pop(TOKEN_OPTION, None) if isinstance(options, dict) else None
    if not isinstance(presented, str):
        raise Refused(f"initialize without initializationOptions.{TOKEN_OPTION}")
    # surrogatepass: a lone surrogate (`"\ud800"`) is a wrong token, not an error in the refusal path.
    if not hmac.compare_digest(presented.encode("utf-8", "surrogatepass"), token.encode()):
        raise Refused(f"a wrong {TOKEN_OPTION}")
    return data


class _Gate:
    """Which connection is served: the first to prove itself; the others are closed."""

    def __init__(self, server: Any, token: str, on_writer: Callable[[Any], None], stop: threading.Event) -> None:
        self.server, self.token, self.on_writer, self.stop = server, token, on_writer, stop
        self.served = False
        self.waiting: dict[asyncio.StreamWriter, None] = {}  # still proving themselves, oldest first
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if self.served:
            log.warning("refused a connection from %s: a client is served already", peer)
            writer.close()
            return
        if len(self.waiting) >= MAX_PENDING:
            oldest = next(iter(self.waiting))
            del self.waiting[oldest]
            log.warning("closed the oldest of %d connections without initialize yet (from %s) for a new one",
                        MAX_PENDING, oldest.get_extra_info("peername"))
            oldest.close()  # its reader sees the end: "closed before initialize"
        self.waiting[writer] = None
        try:
            first = await asyncio.wait_for(first_message(_Bounded(reader), self.token), AUTH_TIMEOUT_S)
        except (Refused, MalformedFrame, asyncio.TimeoutError, OSError) as exc:
            reason = "no initialize in time" if isinstance(exc, asyncio.TimeoutError) else str(exc)
            log.warning("refused a connection from %s: %s", peer, reason)
            writer.close()
            return
        finally:
            self.waiting.pop(writer, None)
        if self.served:  # another connection proved itself meanwhile
            writer.close()
            return
        self.served = True
        log.info("serving %s", peer)
        try:
            await self._serve(reader, writer, first)
        finally:
            self.end()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: dict[str, Any]) -> None:
        from . import pipe_writer

        server = self.server
        protocol = server.protocol
        sock = writer.get_extra_info("socket")
        # The stdio path's writer on this socket: non-blocking, bounded, telling the sink when the
        # client is behind (a duplicate descriptor: the transport keeps reading on its own).
        out = os.fdopen(os.dup(sock.fileno()), "wb", buffering=0)
        out_writer = pipe_writer.PipeWriter(out, asyncio.get_running_loop())
        protocol.set_writer(out_writer)
        self.on_writer(out_writer)
        pygls_log = logging.getLogger("pygls.server")
        try:
            try:  # as read_frames handles a frame (the token is out of it already)
                protocol.handle_message(json.loads(json.dumps(first), object_hook=protocol.structure_message))
            except Exception as exc:
                pygls_log.exception("Unable to handle message")
                server.report_server_error(exc, JsonRpcException)
            await read_frames(self.stop, _Bounded(reader), protocol, pygls_log, server.report_server_error)
        except OSError as exc:
            log.info("the client's connection ended: %s", exc)
        except SystemExit:  # pygls's `exit` handler: the session is over, as at the end of stdin
            pass
        finally:
            try:
                out_writer.finish()  # `exit` closed it already
            except OSError:
                pass
            out.close()
            writer.close()


def serve_tcp(server: Any, host: str, port: int, token: str, on_writer: Callable[[Any], None],
              announce: Callable[[str], None]) -> None:
    """Serve one authenticated client on host:port, then return (the server is shut down)."""
    stop = new_stop_event(server)

    async def run() -> None:
        gate = _Gate(server, token, on_writer, stop)
        listener = await asyncio.start_server(gate.connection, host, port, limit=MAX_HEADER_LINE + 1)
        addresses = ", ".join(f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in listener.sockets)
        announce(addresses)
        # SIGTERM ends the session as the client's end would (its state flushed, the token file
        # removed) instead of killing the process mid-write.
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, gate.end)
        try:
            await gate.ended
        finally:
            listener.close()

    try:
        asyncio.run(run())
    except BrokenPipeError:
        log.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def stderr_line(text: str) -> None:
    print(f"shiro-lsp: {text}", file=sys.stderr, flush=True)
