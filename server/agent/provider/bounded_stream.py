"""A cap on what one provider response may send: per SSE event and per response.

A provider that streams without end (360 MB of text in 8 s) or sends one enormous event (a single
SSE line took the server to 1.37 GB) must not fill the memory or the session file. The bytes are
counted as they arrive from the HTTP response, before the SDK's SSE decoder buffers them; past a
cap the stream is closed and the turn ends with a clear, non-retryable error. Nothing past the cap
reaches the decoder, so nothing past it is kept or saved.

The count wraps the response's `aiter_bytes`, which the SDK's `AsyncStream` reads its events from
(openai 2.x and 3.x); tests/unit/test_provider_caps.py fails if that stops being so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any

from .base import ProviderError

DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


async def bounded_bytes(chunks: AsyncIterator[bytes], max_event: int, max_response: int) -> AsyncIterator[bytes]:
    """`chunks` unchanged, until the response or one event (bytes since the last blank line) passes
    its cap: then ProviderError."""
    total = since_boundary = 0
    tail = b""  # the end of the previous chunk: a blank line may straddle two chunks
    async for chunk in chunks:
        total += len(chunk)
        if total > max_response:
            raise ProviderError(
                f"the provider's response passed {_mb(max_response)} (setting shiro.maxResponseBytes); "
                "the stream was closed and the rest dropped"
            )
        joined = tail + chunk
        cut = max(joined.rfind(b"\n\n"), joined.rfind(b"\r\n\r\n"), joined.rfind(b"\r\r"))
        if cut >= 0:
            since_boundary = len(joined) - cut
        else:
            since_boundary += len(chunk)
        if since_boundary > max_event:
            raise ProviderError(
                f"the provider sent one stream event over {_mb(max_event)} (setting shiro.maxEventBytes); "
                "the stream was closed and the rest dropped"
            )
        tail = chunk[-3:]
        yield chunk


@lru_cache(maxsize=16)
def bounded_stream_class(max_event: int, max_response: int) -> Any:
    """The SDK's AsyncStream with the caps on the bytes it decodes (one class per pair of caps)."""
    from openai import AsyncStream

    class BoundedStream(AsyncStream[object]):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            read = self.response.aiter_bytes

            def aiter_bytes(*args: Any, **kw: Any) -> AsyncIterator[bytes]:
                return bounded_bytes(read(*args, **kw), max_event, max_response)

            self.response.aiter_bytes = aiter_bytes  # type: ignore[method-assign, assignment]

    return BoundedStream
