"""OpenAI-compatible endpoints over Responses or Chat Completions, through the openai SDK.

We build the request body ourselves (msgspec) and hand it to the SDK's low-level `post` as bytes:
the SDK keeps auth, error classes and SSE parsing, while the per-request pydantic transform of the
whole history (about 340 ms on the event loop for 120k tokens) never runs. openai is imported
lazily so `initialize` answers without paying for it.
"""

from __future__ import annotations

import dataclasses
import asyncio
import logging
import json
import os
import random
import sys
import threading
from dataclasses import dataclass
from contextlib import aclosing
from typing import Any, AsyncGenerator, AsyncIterator, Callable, Literal

import msgspec

from . import early_request, wire_chat, wire_responses
from ...config import WireApi
from ...startup.trace import mark
from .bounded_stream import DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES, bounded_stream_class
from .base import MODEL_HINT, Completed, Notice, OutputStarted, ProviderError, ProviderEvent, ProviderRequest
from ...protocol import SET_UP_MODEL

log = logging.getLogger(__name__)


def preload_sdk(then: Callable[[], None] | None = None) -> None:
    """Import the SDK in a background thread, for a front end that knows a prompt is coming
    (an ACP editor opens a session before the user types): the first request then skips ~1 s.
    `then` runs in that thread once the import is over, whether it worked or not."""

    def load() -> None:
        try:
            import openai  # noqa: F401
        finally:
            if then is not None:
                then()

    threading.Thread(target=load, name="shiro-preload-openai", daemon=True).start()

MAX_RETRIES = 3
# Seconds without a byte from the provider before a request (or a stalled stream) fails; a slow
# stream that keeps sending is never cut. Reasoning models can think a while before the first
# byte, hence generous. $SHIRO_PROVIDER_READ_TIMEOUT overrides it (the fault tests use 1 s).
DEFAULT_READ_TIMEOUT_S = 300.0
CONNECT_TIMEOUT_S = 15.0
NO_KEY_PLACEHOLDER = "sk-no-key-required"
_encoder = msgspec.json.Encoder()

MISSING_KEY_MESSAGE = (
    f"No API key: use \"{SET_UP_MODEL}\" to give an endpoint and key, or set OPENAI_API_KEY in the server's "
    "environment, or set shiro.baseUrl (or OPENAI_BASE_URL) to an OpenAI-compatible endpoint that needs no key."
)


@dataclass
class EndpointConfig:
    model: str
    base_url: str | None
    wire_api: WireApi = "responses"
    store: bool = True
    backoff_base: float = 0.5
    # Caps on one response (agent/provider/bounded_stream.py); settings maxEventBytes, maxResponseBytes.
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    # A key handed over with `shiro.setCredentials` (memory only; over OPENAI_API_KEY).
    api_key: str | None = None


# A provider's Retry-After is obeyed up to this many seconds; a longer wait is this one.
MAX_RETRY_AFTER_S = 60.0


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), clamped to 0-60 s;
    None for a missing, negative or unreadable value, which means "the normal backoff"."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime
        from datetime import datetime, timezone

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
        seconds = max(seconds, 0.0)  # a date in the past: retry now
    if seconds != seconds or seconds < 0:  # NaN or negative: garbage
        return None
    return min(seconds, MAX_RETRY_AFTER_S)


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    return parse_retry_after(response.headers.get("retry-after"))


def redact_key(text: str, handed: str | None = None) -> str:
    """`text` with the API key blanked out (the environment's, and `handed`, the one
    `shiro.setCredentials` gave): a 401 may echo the key back, and the message goes to the user,
    the transcript on disk and the log."""
    for key in (os.environ.get("OPENAI_API_KEY"), handed):
        if key and len(key) >= 8:
            text = text.replace(key, "[redacted API key]")
    return text


def translate_error(exc: Exception, handed: str | None = None) -> ProviderError:
    """Map the SDK's exceptions onto ProviderError, keeping the provider's own message (minus the key).
    A refused key (401) names the action that gives another one."""
    err = _translate(exc)
    err.message = redact_key(err.message, handed)
    if err.status == 401:
        err.message += f' (use "{SET_UP_MODEL}" to give another key)'
    err.args = (err.message,)
    return err


def sse_message(text: str) -> str:
    """A provider error whose text is its raw event stream (`data: {"error": {"message": …}}`,
    issue 41 item 5): the message in it; any other text as it is."""
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            payload = json.loads(line[5:].strip())
        except ValueError:
            continue
        inner = payload.get("error", payload) if isinstance(payload, dict) else None
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message.strip():
            return message.strip()
    return text


def _translate(exc: Exception) -> ProviderError:
    import openai

    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        message = body.get("message") or (exc.body if isinstance(exc.body, str) else None) or exc.message
        message = sse_message(message) if isinstance(message, str) else message
        status = exc.status_code
        missing = None
        if status == 404 and isinstance(message, str) and message.startswith("Item with id"):
            missing = message.split("'")[1] if "'" in message else ""
        text = f"{status}: {message}"
        if ProviderError(text, status=status, code=body.get("code")).names_model:
            text = f"{text} ({MODEL_HINT})"
        return ProviderError(
            text,
            status=status,
            code=body.get("code"),
            param=body.get("param"),
            retry_after=_retry_after(exc),
            retryable=status == 429 or status >= 500,
            missing_item=missing,
        )
    if isinstance(exc, openai.APITimeoutError):
        return ProviderError(
            f"the provider sent nothing for {_read_timeout():g} s (read timeout); the request was given up",
            retryable=True,
        )
    if isinstance(exc, openai.APIConnectionError):
        request = getattr(exc, "request", None)
        where = f" at {request.url.copy_with(query=None)}" if request is not None else ""  # the query may hold a key
        return ProviderError(f"could not reach the provider{where}: {exc.message}", retryable=True)
    if isinstance(exc, openai.APIError):
        body = exc.body if isinstance(exc.body, dict) else {}
        code = body.get("code")
        # An in-stream error: only transient ones are worth a retry (never context_length_exceeded).
        return ProviderError(
            sse_message(str(body.get("message") or exc.message)),
            code=code,
            param=body.get("param"),
            retryable=code in (None, "server_error", "rate_limit_exceeded"),
        )
    if isinstance(exc, ValueError):  # json.JSONDecodeError: an SSE event whose data is not JSON
        return ProviderError(f"the provider sent a malformed stream event ({exc})", retryable=True)
    return ProviderError(f"{type(exc).__name__}: {exc}")


def _read_timeout() -> float:
    raw = os.environ.get("SHIRO_PROVIDER_READ_TIMEOUT")
    try:
        value = float(raw) if raw else DEFAULT_READ_TIMEOUT_S
    except ValueError:
        log.warning("ignoring SHIRO_PROVIDER_READ_TIMEOUT=%r: not a number of seconds", raw)
        return DEFAULT_READ_TIMEOUT_S
    return value if value > 0 else DEFAULT_READ_TIMEOUT_S


_SSL_CONTEXTS: dict[tuple[str | None, str | None], Any] = {}


def _ssl_context() -> Any:
    """One TLS context per process (per SSL_CERT_FILE / SSL_CERT_DIR, which decide it) instead of
    one per client: building it reads the CA bundle, ~20-100 ms, which each new session's first
    request paid, and a warm server's children inherit."""
    import httpx2

    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _SSL_CONTEXTS.get(key)
    if context is None:
        context = _SSL_CONTEXTS[key] = httpx2.create_ssl_context()
    return context


def _http_client() -> Any:
    """The SDK's default HTTP client, with the process's TLS context (_ssl_context)."""
    try:
        import httpx2  # noqa: F401
        from openai import DefaultAsyncHttpx2Client
    except ImportError:  # an SDK without httpx2 (openai < 3): its own default client
        return None
    return DefaultAsyncHttpx2Client(verify=_ssl_context())


# How long a completed response may take to end its body. The SDK gives its own drain after
# `[DONE]` the same bound: past it the connection is closed instead of kept for the next request.
DRAIN_TIMEOUT_S = 0.1


async def _drain(stream: Any) -> None:
    """Read a completed response to its end, which returns its connection to the pool (HTTP/1.1)."""
    try:
        async with asyncio.timeout(DRAIN_TIMEOUT_S):
            async for _ in stream:  # nothing should follow the final event; anything that does is dropped
                pass
    except Exception:  # the response is complete already: a failed drain only costs the reuse
        log.debug("could not read a completed response to its end", exc_info=True)


async def _abandon(sending: "asyncio.Future[Any]") -> None:
    """A cancelled (or failed) first request: its send stops, or its response is closed."""
    if not sending.done():
        sending.cancel()
    elif not sending.cancelled() and sending.exception() is None:
        await sending.result().aclose()


class OpenAIProvider:
    """One endpoint, one client. `wire_api: auto` settles on a wire the first time it is asked."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self.name = "openai"
        self._client: Any = None
        self._wire: Literal["responses", "chat"] = "chat" if config.wire_api == "chat" else "responses"
        self._effort_refused = False  # a 400 refused `reasoningEffort` (ProviderError.names_reasoning)

    def _api_key(self) -> str:
        key = self.config.api_key or os.environ.get("OPENAI_API_KEY") or None
        if key is None:
            if not self.config.base_url:
                raise ProviderError(MISSING_KEY_MESSAGE)
            key = NO_KEY_PLACEHOLDER  # local servers need no key, but the SDK insists on one
        return key

    def _get_client(self, http_client: Any = None) -> Any:
        """The SDK's client (imports the SDK the first time). `http_client`: the httpx2 client the
        first request went out on (early_request.py), kept for the next ones."""
        if self._client is None:
            key = self._api_key()
            mark("openai-import")
            from openai import AsyncOpenAI, Timeout

            timeout = Timeout(_read_timeout(), connect=CONNECT_TIMEOUT_S)
            self._client = AsyncOpenAI(api_key=key, base_url=self.config.base_url, max_retries=0, timeout=timeout,
                                       http_client=http_client if http_client is not None else _http_client())
            mark("openai-client")
        return self._client

    def _import_sdk(self, http_client: Any) -> Any:
        """_get_client in the import thread, with no full GC pass over the SDK's import-time
        objects (server/startup/import_gc.py), as the preload has."""
        from ...startup.import_gc import paused

        if "openai" in sys.modules:  # nothing to import: no gc.freeze of what the process holds now
            return self._get_client(http_client)
        with paused():
            return self._get_client(http_client)

    async def aclose(self) -> None:
        """Close the HTTP client and the connections it keeps for the next request: a provider
        dropped without it leaves them to the garbage collector ("unclosed transport")."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def _path(self) -> str:
        return "/responses" if self._wire == "responses" else "/chat/completions"

    async def _open_early(self, content: bytes) -> Any:
        """The first request of a process that has not imported the SDK: sent over httpx2 at once,
        the SDK imported in a thread meanwhile, the response then read by the SDK (early_request.py)."""
        key = self._api_key()
        # httpx2's import and the TLS context (the CA bundle read) in a thread: ~0.1-0.4 s that
        # held every other request of the editor on the event loop's thread.
        http = await asyncio.to_thread(lambda: early_request.http_client(_ssl_context()))
        url = early_request.url_for(self.config.base_url, self._path())
        sending = asyncio.ensure_future(
            early_request.send(http, url, key, content, _read_timeout(), CONNECT_TIMEOUT_S))
        await asyncio.sleep(0)  # the request is on its way before the import takes the GIL
        mark("early-request-sent")
        try:
            # The import runs beside the wait for the model; the loop stays free for the editor.
            client = await asyncio.to_thread(self._import_sdk, http)
            response = await sending
        except BaseException as exc:
            await _abandon(sending)
            if isinstance(exc, Exception) and not isinstance(exc, ProviderError):
                raise translate_error(early_request.sdk_error(exc), self.config.api_key) from exc
            raise
        try:
            await early_request.raise_for_status(client, response)
        except BaseException as exc:
            await response.aclose()  # read and closed already unless reading the error's body failed
            if isinstance(exc, Exception):
                raise translate_error(exc, self.config.api_key) from exc
            raise
        stream_cls = bounded_stream_class(self.config.max_event_bytes, self.config.max_response_bytes)
        return stream_cls(cast_to=object, response=response, client=client)

    async def _open(self, body: dict[str, Any]) -> Any:  # the SDK's AsyncStream (iterable, closable)
        if self._client is None and early_request.eligible():
            return await self._open_early(_encoder.encode(body))
        # The first client of a process imports the SDK (0.56 s quiet, seconds on a loaded machine):
        # in a thread, as the early path does, so the event loop keeps answering the editor.
        if self._client is not None:
            # A key handed over since the client was made (`shiro.setCredentials`, config.api_key):
            # the SDK reads `api_key` for each request's Authorization header.
            key = self._api_key()
            if self._client.api_key != key:
                self._client.api_key = key
        client = self._client if self._client is not None else await asyncio.to_thread(self._import_sdk, None)
        path = self._path()
        try:
            return await client.post(
                path,
                cast_to=object,
                content=_encoder.encode(body),
                options={"headers": {"Content-Type": "application/json"}},
                stream=True,
                stream_cls=bounded_stream_class(self.config.max_event_bytes, self.config.max_response_bytes),
            )
        except Exception as exc:  # translated so the loop sees one error type
            raise translate_error(exc, self.config.api_key) from exc

    def _body(self, request: ProviderRequest) -> dict[str, Any]:
        if self._wire == "responses":
            return wire_responses.request_body(request, self.config.store)
        return wire_chat.request_body(request)

    async def _attempt(self, request: ProviderRequest) -> AsyncGenerator[ProviderEvent, None]:
        """One request's events, Completed last: yielded once the response and the parser are
        closed, so a consumer that stops at it (agent/loop.py returns there) leaves nothing open."""
        stream = await self._open(self._body(request))
        completed: Completed | None = None
        try:
            events = (
                wire_responses.parse_stream(stream, self.config.store)
                if self._wire == "responses"
                else wire_chat.parse_stream(stream)
            )
            try:
                async with aclosing(events):
                    async for event in events:
                        if isinstance(event, Completed):
                            # Read the body's end before the loop moves on, so the next request reuses
                            # this connection instead of opening one (and tearing this one down).
                            await _drain(stream)
                            completed = event
                            break
                        yield event
            except ProviderError:
                raise
            except Exception as exc:
                raise translate_error(exc, self.config.api_key) from exc
        finally:
            await stream.close()
        if completed is not None:
            yield completed

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        """Stream one response, retrying only while nothing of it has been output yet."""
        return _Events(self._stream(request))

    async def _stream(self, request: ProviderRequest) -> AsyncGenerator[ProviderEvent, None]:
        attempt = 0
        dropped_tools = False
        if self._effort_refused and request.reasoning_effort is not None:
            request = dataclasses.replace(request, reasoning_effort=None)
        while True:
            output_started = False
            try:
                # Closed as soon as this is (a retry, an error, the consumer's aclose): the
                # attempt's `finally` closes its response then, not when the collector gets to it.
                async with aclosing(self._attempt(request)) as events:
                    async for event in events:
                        if isinstance(event, OutputStarted):
                            output_started = True
                        yield event
                return
            except ProviderError as err:
                if output_started:
                    raise
                if (err.status == 404 and err.missing_item is None and not err.names_model
                        and self.config.wire_api == "auto" and self._wire == "responses"):
                    self._wire = "chat"
                    yield Notice("this endpoint has no Responses API; using Chat Completions for this session")
                    continue
                if err.names_reasoning and request.reasoning_effort is not None:
                    # The rest of the session goes without it too: the model will not change its mind.
                    self._effort_refused = True
                    request = dataclasses.replace(request, reasoning_effort=None)
                    yield Notice("the endpoint refused the reasoning effort for this model; sent without it "
                                 "(reasoningEffort, /effort default to stop asking)")
                    continue
                if err.names_tools and request.tools and not dropped_tools:
                    dropped_tools = True
                    request = request.without_tools()
                    yield Notice("the endpoint rejected tool definitions; retrying once without tools")
                    continue
                if not err.retryable or attempt >= MAX_RETRIES:
                    raise
                attempt += 1
                if err.retry_after is not None:
                    delay = min(max(err.retry_after, 0.0), MAX_RETRY_AFTER_S)
                else:
                    delay = min(self.config.backoff_base * 2 ** (attempt - 1), 30.0)
                delay += random.uniform(0, 0.1)
                yield Notice(f"{err.message}; retrying in {delay:.1f} s ({attempt}/{MAX_RETRIES})")
                await asyncio.sleep(delay)


class _Events:
    """A provider stream that has closed everything under it by the time it hands out Completed.

    Its consumers return on Completed without closing the stream (agent/loop.py,
    agent/side_request.py): as a bare async generator it was then left at that yield, and closed
    by the garbage collector later, on whatever loop (or none) was running then. Anything else
    ends the generator itself: an error, or a cancel arriving in `__anext__`."""

    def __init__(self, events: AsyncGenerator[ProviderEvent, None]) -> None:
        self._events = events

    def __aiter__(self) -> "_Events":
        return self

    async def __anext__(self) -> ProviderEvent:
        event = await self._events.__anext__()
        if isinstance(event, Completed):
            await self._events.aclose()
        return event

    async def aclose(self) -> None:
        await self._events.aclose()


def import_sdk_now() -> None:
    """Import, in this thread, what a first turn would import lazily (the warm server's fork
    point); only this adapter imports openai."""
    provider = OpenAIProvider(EndpointConfig(model="warm-up", base_url="http://127.0.0.1:9/v1"))
    provider._get_client()  # builds the client class; opens no connection
    from openai import AsyncStream  # noqa: F401
