"""A pygls writer for stdout that never blocks the event loop while the client is slow to read.

pygls's own `StdoutWriter` writes and flushes synchronously: when the client stops reading, the
pipe fills and the whole server (provider stream, other requests) stalls inside `write`. This
one writes what the pipe takes at once (`os.write` on a non-blocking fd) and keeps the rest,
written when the loop says the pipe is writable. `pending` tells the delta coalescer to join
streamed text while something is still unwritten; `on_drained` runs once all of it is out.

The buffer is bounded: past `limit` bytes a write blocks until everything is out, so a client
that never reads costs at most `limit` bytes, and the loop stops reading from the provider
meanwhile (back-pressure through TCP), instead of buffering without end.

Only pipes and sockets are made non-blocking: O_NONBLOCK is a property of the open file, and a
terminal shares it with the shell that started us.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
from typing import BinaryIO, Callable

log = logging.getLogger(__name__)

LIMIT = 4 * 1024 * 1024


def suits(stream: BinaryIO) -> bool:
    """A pipe or a socket: the outputs a client gives its server, and safe to make non-blocking."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PipeWriter:
    def __init__(self, stream: BinaryIO, loop: asyncio.AbstractEventLoop, limit: int = LIMIT) -> None:
        stream.flush()
        self._stream = stream
        self._fd = stream.fileno()
        self._loop = loop
        self._limit = limit
        self._buffer = bytearray()
        self._watching = False
        self._blocking = False
        self._broken = False
        self.on_drained: Callable[[], None] | None = None
        self._loop_thread = threading.get_ident()
        os.set_blocking(self._fd, False)

    @property
    def pending(self) -> bool:
        return bool(self._buffer)

    def write(self, data: bytes) -> None:
        if self._broken:
            raise BrokenPipeError("the client closed its end")
        if self._blocking:
            self._write_all(data)
            return
        if threading.get_ident() != self._loop_thread:  # the buffer and the watch are the loop's
            self._loop.call_soon_threadsafe(self.write, data)
            return
        if self._buffer:
            self._buffer += data
            if len(self._buffer) > self._limit:
                self.flush_blocking()
            return
        try:
            written = os.write(self._fd, data)
        except BlockingIOError:
            written = 0
        if written < len(data):
            self._buffer += data[written:]
            self._watch()

    def _watch(self) -> None:
        if not self._watching:
            self._loop.add_writer(self._fd, self._on_writable)
            self._watching = True

    def _unwatch(self) -> None:
        if self._watching:
            self._watching = False
            try:
                self._loop.remove_writer(self._fd)
            except (RuntimeError, ValueError):  # the loop is closed already
                pass

    def _on_writable(self) -> None:
        try:
            written = os.write(self._fd, self._buffer)
        except BlockingIOError:
            return
        except OSError as exc:  # the client is gone: nothing more can be delivered
            log.debug("client output closed: %s", exc)
            self._broken = True
            self._buffer.clear()
            self._unwatch()
            return
        del self._buffer[:written]
        if not self._buffer:
            self._unwatch()
            self._drained()

    def _drained(self) -> None:
        if self.on_drained is not None:
            self.on_drained()

    def _write_all(self, data: bytes | bytearray) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                import select

                select.select([], [self._fd], [])

    def flush_blocking(self) -> None:
        """Write everything now, waiting for the client if need be (the bound, and at the end)."""
        data, self._buffer = self._buffer, bytearray()
        self._unwatch()
        if data:
            try:
                self._write_all(data)
            except OSError:
                self._broken = True
                raise BrokenPipeError("the client closed its end") from None
        self._drained()

    def finish(self) -> None:
        """The loop is ending: what is left goes out now, later writes are plain blocking ones."""
        try:
            self.flush_blocking()
        except BrokenPipeError:
            pass
        self._blocking = True
        os.set_blocking(self._fd, True)

    def close(self) -> None:
        self.finish()
        self._stream.close()
