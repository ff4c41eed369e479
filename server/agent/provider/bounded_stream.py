"""A cap on what one provider response may send: per SSE event and per response.

A provider that streams without end (360 MB of text in 8 s) or sends one enormous event (a single
SSE line took the server to 1.37 GB) must not fill the memory or the session file. The bytes are
counted as they arrive from the HTTP response, before the SDK's SSE decoder buffers them; past a
cap the stream is closed and the turn ends with a clear, non-retryable error. Nothing past the cap
reaches the decoder, so nothing past it is kept or saved.

The count wraps the response's `aiter_bytes`, which the SDK's `AsyncStream` reads its events from
(openai 2.x and 3.x); tests/unit/test_provider_caps.py fails if that stops being so.

The same class closes what it reads through. The SDK's stream is a chain of async generators (its
own events, its SSE decoder, our count, httpx2's bytes) and its `close()` closes only the HTTP
response: a chain left after an error event, a malformed one, a cap or a consumer that stops was
closed later by the garbage collector, on whatever loop (or none) was running then.
`BoundedStream.close()` closes every generator of the chain, outermost first, then the response;
tests/unit/test_stream_closing.py fails if one is left to the collector.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from functools import lru_cache
from typing import Any

from .base import ProviderError

DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


async def bounded_bytes(chunks: AsyncIterator[bytes], max_event: int, max_response: int) -> AsyncGenerator[bytes, None]:
    """`chunks` unchanged, until the response or one event (bytes since the last blank line) passes
    its cap: then ProviderError. `chunks` is closed when this generator ends, however it ends."""
    total = since_boundary = 0
    tail = b""  # the end of the previous chunk: a blank line may straddle two chunks
    try:
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
    finally:
        # Past a cap (or closed at a yield) `chunks` is left at its own yield: closed here, which
        # closes httpx2's generators under it (its aiter_bytes closes its aiter_raw).
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


@lru_cache(maxsize=16)
def bounded_stream_class(max_event: int, max_response: int) -> Any:
    """The SDK's AsyncStream with the caps on the bytes it decodes (one class per pair of caps)."""
    from openai import AsyncStream

    class BoundedStream(AsyncStream[object]):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            # The generators under `self._iterator`, by depth (0 outermost), as they are made.
            self._chain: list[tuple[int, Any]] = []
            read = self.response.aiter_bytes

            def aiter_bytes(*args: Any, **kw: Any) -> AsyncIterator[bytes]:
                raw = read(*args, **kw)
                bounded = bounded_bytes(raw, max_event, max_response)
                self._chain += [(2, bounded), (3, raw)]
                return bounded

            self.response.aiter_bytes = aiter_bytes  # type: ignore[method-assign, assignment]
            decoder: Any = getattr(self, "_decoder", None)
            decode = getattr(decoder, "aiter_bytes", None)
            if decode is not None:

                def decoded(iterator: AsyncIterator[bytes]) -> Any:
                    events = decode(iterator)
                    self._chain.append((1, events))
                    return events

                decoder.aiter_bytes = decoded

        def _iter_events(self) -> Any:
            events = super()._iter_events()
            self._chain.append((0, events))
            return events

        def __aiter__(self) -> Any:
            # The SDK's `__aiter__` is a generator per `async for` over `self._iterator`, left at
            # a yield whenever the loop is left early (parse_stream returns on the final event).
            return self

        async def close(self) -> None:
            """Every generator of the chain closed, outermost first, then the response."""
            try:
                iterator: Any = self._iterator  # the SDK's `__stream__` generator
                for generator in [iterator, *(g for _, g in sorted(self._chain, key=lambda entry: entry[0]))]:
                    if hasattr(generator, "aclose"):
                        await generator.aclose()
            finally:
                await super().close()

    return BoundedStream
