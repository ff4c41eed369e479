"""LSP's base-protocol framing, written once for the server and the terminal client: headers, a
blank line, then `Content-Length` bytes of JSON.

Who reads and writes frames with it: the server's stdlib front that answers `initialize` before
pygls is imported (server/startup/lsp_front.py), pygls's reader replaced by ours
(server/lsp/pygls_overrides.py, override 7; `--tcp` too, server/lsp/tcp_guard.py), and in the
terminal client the asyncio wire (clients/terminal/jsonrpc.py), the `initialize` written before
asyncio is imported (clients/terminal/initialize.py) and the thread that sends `shiro -p`'s chat
as soon as that is answered (clients/terminal/chat_ahead.py). So a header rule holds in every one
of them. Stdlib only and no asyncio at import: the front and the client's early paths run before
either is loaded (docs/performance.md). It sits in model/ (which imports nothing of ours) because
both the server and the terminal client may import model/ (tests/unit/test_architecture.py).

The rules (docs/protocol.md, "Malformed frames"): header names case-insensitive, as HTTP's, which
the base protocol copies; other headers (Content-Type) ignored; lines and bodies bounded. A frame
that breaks them raises `MalformedFrame`: where the next message starts is then unknown, so the
connection ends with that reason instead of misreading everything after it.
"""

from __future__ import annotations

from typing import Any, BinaryIO

# Bounds of one frame. A header line is short ("Content-Length: 123\r\n"); a body may be a 50 MB
# prompt or a whole transcript, never a gigabyte.
MAX_HEADER_LINE = 8 * 1024
MAX_HEADER_LINES = 32
MAX_BODY_BYTES = 256 * 1024 * 1024

MALFORMED = "malformed LSP frame from the client (%s); closing the connection"  # the server logs it with the reason


class MalformedFrame(ValueError):
    """A frame that breaks the base protocol; `str()` says how. The server logs it (MALFORMED)
    and closes the connection; the client ends its connection with it."""


def frame(body: bytes) -> bytes:
    """One message's JSON body, framed (the client's writer; the server writes through pygls)."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def check_body(body: bytes, length: int) -> None:
    """A body read for `length` bytes came whole, or the input ended inside it."""
    if len(body) < length:
        raise MalformedFrame(f"the input ended inside a frame's body ({len(body)} of {length} bytes)")


class Headers:
    """One frame's headers, fed a line at a time as read, line end included. The server's readers
    read at most MAX_HEADER_LINE + 1 bytes a line; the client's may hand a longer one."""

    def __init__(self) -> None:
        self.lines = 0
        self._length: int | None = None

    def feed(self, line: bytes) -> int | None:
        """The body's length once `line` is the blank line ending the headers; None before that.
        `line == b""` is the end of input: None between frames, MalformedFrame inside one."""
        if not line:
            if self.lines:
                raise MalformedFrame("the input ended inside a frame's headers")
            return None
        self.lines += 1
        if self.lines > MAX_HEADER_LINES + 1:
            raise MalformedFrame(f"more than {MAX_HEADER_LINES} header lines")
        if len(line) > MAX_HEADER_LINE + 2:
            raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes")
        if not line.endswith(b"\n"):
            if len(line) > MAX_HEADER_LINE:  # a bounded readline stopped at its limit
                raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes")
            raise MalformedFrame("the input ended inside a frame's headers")
        text = line.rstrip(b"\r\n")
        if not text:
            if self._length is None:
                raise MalformedFrame("a frame without a Content-Length header")
            return self._length
        name, colon, value = text.partition(b":")
        if not colon:
            raise MalformedFrame(f"a header line without a colon: {text[:80]!r}")
        if name.strip().lower() == b"content-length":
            raw = value.strip()
            if not raw.isdigit():
                raise MalformedFrame(f"Content-Length is not a number: {raw[:40]!r}")
            length = int(raw)
            if length > MAX_BODY_BYTES:
                raise MalformedFrame(f"Content-Length {length} is over the {MAX_BODY_BYTES // (1024 * 1024)} MB limit")
            self._length = length
        return None


def read_blocking_frame(stream: BinaryIO) -> tuple[bytes, bytes] | None:
    """The next frame from a blocking stream: (the raw bytes read, the body); None at the end of
    input between frames. Raises MalformedFrame. (The server's front, before asyncio.)"""
    headers = Headers()
    raw = bytearray()
    while True:
        line = stream.readline(MAX_HEADER_LINE + 1)
        raw += line
        length = headers.feed(line)
        if length is not None:
            break
        if not line:
            return None
    body = stream.read(length) if length else b""
    check_body(body, length)
    raw += body
    return bytes(raw), body


def next_frame(data: bytes, at: int = 0) -> tuple[bytes, int] | None:
    """The body of the frame that starts at `data[at:]` and where the next one starts; None while
    part of it has not arrived yet. (The client's early reader, clients/terminal/chat_ahead.py.)"""
    headers = Headers()
    while True:
        end = data.find(b"\n", at)
        if end < 0:
            if len(data) - at > MAX_HEADER_LINE + 2:
                raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes")
            return None
        length = headers.feed(data[at:end + 1])
        at = end + 1
        if length is not None:
            break
    if len(data) - at < length:
        return None
    return data[at:at + length], at + length


async def read_frame(reader: Any) -> bytes | None:
    """The next body from an asyncio.StreamReader (readline/readexactly); None at the end of
    input between frames. (The client's wire, clients/terminal/jsonrpc.py.)"""
    headers = Headers()
    while True:
        try:
            line: bytes = await reader.readline()
        except ValueError:  # the reader's own line limit, which is over ours
            raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes") from None
        length = headers.feed(line)
        if length is not None:
            break
        if not line:
            return None
    import asyncio  # loaded already by whoever awaits this; not at import (see above)

    try:
        body: bytes = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise MalformedFrame(f"the input ended inside a frame's body ({len(exc.partial)} of {length} bytes)") from None
    return body
