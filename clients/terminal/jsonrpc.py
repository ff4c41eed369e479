"""JSON-RPC 2.0 with LSP's Content-Length framing over an asyncio stream pair: the terminal
client's whole wire layer.

Why not pygls' LanguageClient (which the client used before): importing pygls and lsprotocol
costs about 0.4 s of CPU at every `shiro` start, which on a two-core machine is taken from the
server booting beside it, and it is nearly all of the client's start on a warm server
(docs/performance.md). The client needs only requests, notifications and answers to the
server's few requests, all as plain JSON: msgspec decodes a frame in microseconds.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

import msgspec

from ..model.lsp_framing import MalformedFrame, frame, read_frame

log = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

Notify = Callable[[str, Any], None]
Serve = Callable[[str, Any], Awaitable[Any]]  # a server->client request; raise RpcError to refuse

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class RpcError(Exception):
    """An error answer: `code` and `message` as the peer sent them."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ConnectionLost(Exception):
    """The stream ended (or broke) before the answer came."""


class JsonRpc:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | Any,
                 on_notify: Notify, on_request: Serve, first_id: int = 0) -> None:
        """`first_id`: requests up to this id were written to the stream before it was handed
        over (clients/terminal/initialize.py); `expect` waits for their answers."""
        self.reader, self.writer = reader, writer
        self.on_notify, self.on_request = on_notify, on_request
        self._next_id = first_id
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.lost: str | None = None  # why the stream ended, once it has
        self._reader_task = asyncio.create_task(self._read_loop())

    # -- sending ---------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        if self.lost is not None:
            raise ConnectionLost(self.lost)
        body = _encode(message)
        try:
            self.writer.write(frame(body))
        except (OSError, RuntimeError) as exc:  # a closed pipe or transport
            raise ConnectionLost(str(exc) or type(exc).__name__) from None

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any = None) -> Any:
        self._next_id += 1
        msg_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            await self._drain()
            return await future
        finally:
            self._pending.pop(msg_id, None)

    def expect(self, msg_id: int) -> asyncio.Future[Any]:
        """The answer to request `msg_id`, which was sent before this JsonRpc took the stream.
        Call it before the first await after construction, so no answer is read unclaimed."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        future.add_done_callback(lambda _: self._pending.pop(msg_id, None))
        if self.lost is not None:
            future.set_exception(ConnectionLost(self.lost))
        return future

    async def _drain(self) -> None:
        drain = getattr(self.writer, "drain", None)
        if drain is not None:
            try:
                await drain()
            except (OSError, RuntimeError) as exc:
                raise ConnectionLost(str(exc) or type(exc).__name__) from None

    # -- receiving -------------------------------------------------------------------------
    async def _read_loop(self) -> None:
        why = "the server closed the connection"
        try:
            while True:
                body = await read_frame(self.reader)
                if body is None:
                    break
                try:
                    message = _decode(body)
                except msgspec.DecodeError as exc:  # well framed: the next frame is still found
                    log.debug("undecodable frame: %s", exc)
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        except MalformedFrame as exc:  # where the next message starts is unknown (server/model/lsp_framing.py)
            why = f"malformed LSP frame from the server ({exc})"
            log.error("%s; closing the connection", why)
        except (ConnectionError, OSError) as exc:
            why = f"the connection broke ({exc})"
        finally:
            self._lose(why)

    def _lose(self, why: str) -> None:
        if self.lost is None:
            self.lost = why
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost(why))

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # an answer
            future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if future is None or future.done():
                return
            error = message.get("error")
            if isinstance(error, dict):
                future.set_exception(RpcError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")),
                                              error.get("data")))
            else:
                future.set_result(message.get("result"))
            return
        params = message.get("params")
        if "id" not in message:
            try:
                self.on_notify(method, params)
            except Exception:  # a listener's bug must not end the connection
                log.exception("notification handler for %s failed", method)
            return
        task = asyncio.create_task(self._answer(message["id"], method, params))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        try:
            result = await self.on_request(method, params)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "result": result}
        except RpcError as exc:
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": exc.code, "message": exc.message}}
        except Exception as exc:
            log.exception("request handler for %s failed", method)
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": INTERNAL_ERROR, "message": str(exc)}}
        try:
            self._send(reply)
        except ConnectionLost:
            pass

    async def closed(self) -> None:
        """Until the stream has ended."""
        await asyncio.shield(self._reader_task)
