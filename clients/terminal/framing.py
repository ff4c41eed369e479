"""LSP's base-protocol framing for the terminal client, the one place it is written: headers, a
blank line, then `Content-Length` bytes of JSON.

Three parts of the client frame messages, all in clients/terminal/: the asyncio wire
(jsonrpc.py), the `initialize` written before asyncio is imported (initialize.py) and the thread
that sends `shiro -p`'s chat as soon as that is answered (chat_ahead.py). All three read and write
frames here, so a header rule holds in each of them. Stdlib only, and no asyncio: the last two run before
either is loaded (docs/performance.md).

Reading follows the server's rules (server/lsp/pygls_overrides.py, override 7; docs/protocol.md,
"Malformed frames"): header names case-insensitive, as HTTP's, which the base protocol copies;
other headers (Content-Type) ignored; lines and bodies bounded. A frame that breaks them raises
`MalformedFrame`: where the next message starts is then unknown, so the connection ends with that
reason instead of misreading everything after it.
"""

from __future__ import annotations

from typing import Any

# The server's bounds (server/lsp/pygls_overrides.py): a header line is short, a body may be a
# whole transcript, never a gigabyte.
MAX_HEADER_LINE = 8 * 1024
MAX_HEADER_LINES = 32
MAX_BODY_BYTES = 256 * 1024 * 1024


class MalformedFrame(ValueError):
    """A frame that breaks the base protocol; `str()` says how."""


def frame(body: bytes) -> bytes:
    """One message's JSON body, framed."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Headers:
    """One frame's headers, fed a line at a time (each line with its line end)."""

    def __init__(self) -> None:
        self.lines = 0
        self._length: int | None = None

    def feed(self, line: bytes) -> int | None:
        """The body's length once `line` is the blank line that ends the headers; else None."""
        self.lines += 1
        if self.lines > MAX_HEADER_LINES + 1:
            raise MalformedFrame(f"more than {MAX_HEADER_LINES} header lines")
        if len(line) > MAX_HEADER_LINE + 2:
            raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes")
        if not line.endswith(b"\n"):
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


def next_frame(data: bytes, at: int = 0) -> tuple[bytes, int] | None:
    """The body of the frame that starts at `data[at:]` and where the next one starts; None while
    part of it has not arrived yet."""
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
    input between frames."""
    headers = Headers()
    while True:
        try:
            line: bytes = await reader.readline()
        except ValueError:  # the reader's own line limit, which is over ours
            raise MalformedFrame(f"a header line longer than {MAX_HEADER_LINE} bytes") from None
        if not line:
            if headers.lines:
                raise MalformedFrame("the input ended inside a frame's headers")
            return None
        length = headers.feed(line)
        if length is not None:
            break
    import asyncio  # loaded already by whoever awaits this; not at import (see above)

    try:
        body: bytes = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise MalformedFrame(f"the input ended inside a frame's body ({len(exc.partial)} of {length} bytes)") from None
    return body
