"""A fake OpenAI-compatible provider: a real HTTP server on 127.0.0.1.

It serves ``POST /v1/responses`` (Responses API) and ``POST /v1/chat/completions``
(Chat Completions), streaming (SSE) or not, in wire formats the real ``openai`` SDK
parses without complaint, and rejects broken histories with the real API's errors.
It runs on stdlib ``http.server`` in a background thread, so a language server
started as a subprocess can talk to it through ``OPENAI_BASE_URL=fake.base_url``.

Usage::

    from tests.fake_provider import Call, FakeProvider, HttpError, Reply

    with FakeProvider() as fake:                       # or fake.start() / fake.stop()
        fake.script(
            Reply(text="let me look", reasoning="thinking", calls=[Call("read", {"path": "a"})]),
            HttpError(429, "slow down", type="rate_limit_error", retry_after=0.1),
            lambda req: Reply(text=f"you sent {len(req.body['input'])} items"),
        )
        ...  # point the client at fake.base_url
        fake.wait_for_requests(3)
        assert fake.requests[0].api == "responses"

State and knobs on a FakeProvider (thread-safe enough for tests):

* ``requests`` / ``rejections``: every provider request, and those the validator
  rejected (``.error`` = the inner error object), as :class:`RecordedRequest`
  (``path``, lowercased ``headers``, parsed JSON ``body``, ``api`` "responses"|"chat").
* ``stored``: output item id -> the item as sent, plus a ``"response_id"`` key naming the
  response that produced it (Responses API, ``store`` not false). ``forget_items()``
  empties it.
* ``responses_route = False``: ``/v1/responses`` answers 404 text ``404 page not found``.
* ``supports_tools = False``: a request with non-empty ``tools`` gets 400 (param ``tools``,
  code ``unsupported_parameter``).
* ``strict_reasoning_followup = True``: enables check 5 below.
* ``disconnected_early``: streams the client closed before the final event was written.
* ``connections``: TCP connections accepted (a client that keeps its connection alive makes
  one for many requests).
* ``pending``: scripted steps not consumed yet. ``wait_for_requests(n, timeout)`` blocks
  until ``n`` requests arrived (TimeoutError otherwise) and returns a copy of them.
* ``GET /v1/models`` lists ``models`` (default ``["fake-model"]``).
* ``strict_models = True``: a request for a model not in ``models`` gets the real API's 404
  (code ``model_not_found``, "The model `…` does not exist or you do not have access to it.").
* ``api_key``: when set, every request (``/v1/models`` too) must carry ``Authorization: Bearer
  <api_key>``; any other gets the real API's 401 (code ``invalid_api_key``, the key masked as
  ``sk-ab****yz``) and is kept in ``unauthorized`` (consuming no step), not in ``requests``.
* ``side_reply``: when set, a callable answering every *side request* (one sent without
  ``tools``: span summaries, ``/compact``, ``/memory``) instead of the script; it returns a
  :class:`Reply`/:class:`HttpError`, or None to use the script after all. Main requests keep
  consuming the script, so a tool loop is scripted without guessing where summaries fall.
* ``side_requests`` / ``summary_requests`` / ``main_requests``: the recorded requests
  without tools, those of them asking for a pruned-span summary (by the server's summary
  instructions), and those with tools.
* ``usage`` reports ``cached_tokens`` (Responses ``input_tokens_details``, Chat
  ``prompt_tokens_details``) as a prompt cache would: the longest prefix of the request's
  prompt (``prompt_text``: instructions, tools, conversation) shared with one of the last 8.
* The ``fake`` pytest fixture (tests/conftest.py) gives every test a started one.

Each provider request (either API) consumes one scripted step, in FIFO order. A step
is a :class:`Reply`, an :class:`HttpError`, or a callable taking the
:class:`RecordedRequest` and returning one of those. With nothing scripted the
answer is a 500 whose message is ``fake provider: no scripted response left``.
Requests the validator rejects (``fake.rejections``) consume no step.

Every request body is first checked against the openai SDK's own request types (tests/sdk_types.py:
``ResponseCreateParamsStreaming`` / ``CompletionCreateParamsStreaming`` through pydantic, every
item by its ``type``/``role``, unknown keys refused): a body the SDK's types refuse gets the real
API's 400 naming the path, e.g. ``Missing required parameter: 'input[6].id'.`` (param
``input[6].id``, code ``missing_required_parameter``), ``Unknown parameter: 'input[0].bogus'.``
(``unknown_parameter``), ``Invalid type for 'input[2].output': ...`` (``invalid_type``). Every test
runs it; a product change that sends what the real API refuses fails the suite.

Responses API validation (all errors: ``type`` ``invalid_request_error``, param ``input``,
code null), checked in this order over the whole ``input``:

1. 404 ``Item with id 'X' not found.`` for an ``item_reference`` to an unknown id, or an
   inline item whose ``id`` starts with ``rs_``/``msg_``/``fc_`` and is not stored. If
   the id came from a response made with ``store: false``, the real API's suffix
   `` Items are not persisted when `store` is set to false. ...`` is appended.
2. 400 ``Item 'msg_…' of type 'message' was provided without its required 'reasoning'
   item: 'rs_…'.`` when a stored message/function_call (by reference or inline id)
   came from a response that also produced a reasoning item and that reasoning item's
   id is not earlier in ``input``.
3. 400 ``No tool call found for function call output with call_id call_….``
4. 400 ``No tool output found for function call call_….``
5. only when ``fake.strict_reasoning_followup`` is set (off by default): 400
   ``Item 'rs_…' of type 'reasoning' was provided without its required following item.``
   for a reasoning item that is last in ``input`` or directly followed by a message
   from a user/developer/system (e.g. a history kept after an aborted turn; the live API
   rejects such histories, its exact trigger is not pinned down, hence opt-in).

Chat Completions validation: 400 for a ``tool`` message that answers no tool call of
the preceding assistant message, and for an assistant ``tool_calls`` message not
followed by a tool message for each id (param ``messages.[i].role``).

In-stream errors and what the installed SDK (openai 3.57, AsyncOpenAI) does with them:

* Responses, ``Reply(error_after=N)`` with ``error_style="flat"`` (default, the
  documented shape ``{"type":"error","code","message","param","sequence_number"}``):
  the SDK does NOT raise; iteration yields a typed ``ResponseErrorEvent`` and the
  stream then ends without ``response.completed``.
* ``error_style="nested"`` (the shape the live API actually sends,
  ``{"type":"error","error":{"type","code","message","param"},"sequence_number"}``):
  the SDK raises ``openai.APIError`` (message = the error message, ``.body`` = the
  inner error dict) while iterating.
* ``error_style="failed"``: a ``response.failed`` event whose response has
  ``status: "failed"`` and ``error: {"code": "server_error", "message": ...}``; the SDK
  yields a typed ``ResponseFailedEvent`` (no exception).
* Chat, ``error_after=N``: ``data: {"error": {...}}`` then the stream ends (no
  ``[DONE]``); the SDK raises ``openai.APIError`` while iterating.
* ``break_after=N`` (connection dropped mid-body, chunked encoding unfinished): the SDK
  raises ``openai.APIConnectionError`` while iterating (either API).
* ``hang_after=N``: nothing more is sent until the client goes away or ``stop()``; with a
  client read timeout the SDK raises ``openai.APITimeoutError``. A client that closes the
  stream early increments ``fake.disconnected_early`` (not counted when ``stop()`` cuts it).
* ``garbage_after=N``: an SSE event whose data is not JSON (``GARBAGE_SSE``), then the body
  ends; the SDK raises ``json.JSONDecodeError`` while iterating (either API).
* A fault index past the end of the stream is clamped so the fault still happens before
  the final event. Faulty (error/break/hang) responses store no items.
* Non-streaming requests: ``break_after`` drops the connection without an answer,
  ``error_after`` answers 500, ``hang_after`` hangs, ``delay`` is slept once.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import socket
import socketserver
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from . import sdk_types


__all__ = [
    "Call",
    "FakeProvider",
    "HttpError",
    "RecordedRequest",
    "Reply",
    "Step",
]

# What `garbage_after` sends: an SSE data line whose payload is not JSON, then the end of the body.
GARBAGE_SSE = b"data: {this is not json\n\n"
NO_STEP_LEFT = "fake provider: no scripted response left"
STREAM_ERROR_MESSAGE = "fake provider: scripted in-stream error"
_STORED_PREFIXES = ("rs_", "msg_", "fc_")
_NOT_PERSISTED = (
    " Items are not persisted when `store` is set to false. Try again with `store` set to"
    " true, or remove this item from your input."
)


_warmed = threading.Event()
_warm_lock = threading.Lock()


def _warm_sdk_types() -> None:
    """Build the SDK-type adapters once per process, off the request path (see sdk_types.warm)."""
    with _warm_lock:
        if _warmed.is_set():
            return
        _warmed.set()
    threading.Thread(target=sdk_types.warm, name="sdk-types-warm", daemon=True).start()


def _hex(n: int = 24) -> str:
    return secrets.token_hex(n // 2)


@dataclass
class Call:
    """A function call the fake model makes. ``call_id`` defaults to ``call_<random>``."""

    name: str
    arguments: dict[str, Any] | str
    call_id: str | None = None

    def __post_init__(self) -> None:
        if self.call_id is None:
            self.call_id = "call_" + _hex(24)

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted model turn (see module docstring for the stream-fault knobs)."""

    text: str | None = None
    reasoning: str | None = None
    encrypted: str | None = None
    calls: list[Call] = field(default_factory=list)
    # The model declines: Responses sends a message content part ``{"type": "refusal"}``
    # (streamed as ``response.refusal.delta`` / ``.done``), Chat ``delta.refusal`` /
    # ``message.refusal`` with ``content`` null; after ``text`` when both are given.
    refusal: str | None = None
    chunks: int = 3
    delay: float = 0.0  # between every two SSE events of the stream
    think: float = 0.0  # once, before the first event (the model thinking)
    usage: tuple[int, int] | None = None
    break_after: int | None = None
    error_after: int | None = None
    hang_after: int | None = None
    garbage_after: int | None = None
    error_style: Literal["flat", "nested", "failed"] = "flat"
    error_message: str = STREAM_ERROR_MESSAGE


@dataclass
class HttpError:
    """A scripted HTTP error answer. ``body_text`` sends that text as text/plain instead of JSON."""

    status: int
    message: str = "fake provider: scripted HTTP error"
    type: str = "server_error"
    code: str | None = None
    param: str | None = None
    retry_after: float | None = None
    body_text: str | None = None

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass
class RecordedRequest:
    """A request as received. ``error`` is the inner error object when the fake rejected it."""

    path: str
    headers: dict[str, str]
    body: Any
    api: Literal["responses", "chat"]
    method: str = "POST"
    error: dict[str, Any] | None = None


Step = Reply | HttpError | Callable[[RecordedRequest], "Reply | HttpError"]


# How the server's span-summary instructions begin (server/agent/prune.py, SUMMARY_INSTRUCTIONS).
SUMMARY_INSTRUCTIONS_START = "You summarise part of a coding agent's conversation"


def is_side_request(req: RecordedRequest) -> bool:
    """A request beside the conversation: the server sends those without tools."""
    return isinstance(req.body, dict) and not req.body.get("tools")


class _Rejection(Exception):
    def __init__(
        self, status: int, message: str, param: str | None, code: str | None = None,
        type: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error: dict[str, Any] = {"message": message, "type": type, "param": param, "code": code}


class _ClientGone(Exception):
    """The client closed its side of a streaming response."""


class _Stopped(Exception):
    """The provider is stopping."""


def _split(text: str, chunks: int) -> list[str]:
    if not text:
        return []
    n = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), n)
    out: list[str] = []
    pos = 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(text[pos : pos + step])
        pos += step
    return out


def _tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4) if text else 0


def prompt_text(api: str, body: dict[str, Any]) -> str:
    """A request's prompt in the order a provider's prefix cache reads it: instructions, tools,
    then the conversation (each item after the ones before it), as one string."""
    if api == "responses":
        return json.dumps([body.get("instructions") or "", body.get("tools") or [], body.get("input") or []])
    return json.dumps([body.get("tools") or [], body.get("messages") or []])


def common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    provider: FakeProvider

    def server_bind(self) -> None:
        # Skip HTTPServer's reverse DNS lookup of the host name.
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]


class FakeProvider:
    """The fake provider. Public state is documented in the module docstring."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.rejections: list[RecordedRequest] = []
        self.stored: dict[str, dict[str, Any]] = {}
        self.responses_route: bool = True
        self.supports_tools: bool = True
        self.strict_reasoning_followup: bool = False
        self.models: list[str] = ["fake-model"]
        self.strict_models: bool = False
        self.api_key: str | None = None
        self.unauthorized: list[RecordedRequest] = []
        self.disconnected_early: int = 0
        self.connections: int = 0
        self.side_reply: Callable[[RecordedRequest], Reply | HttpError | None] | None = None
        self._steps: deque[Step] = deque()
        self._reasoning_of_response: dict[str, str] = {}
        self._unstored_ids: set[str] = set()
        # The prompts of recent requests, for `cached_tokens` (a provider's prompt cache, modelled).
        self._recent_prompts: deque[str] = deque(maxlen=8)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> FakeProvider:
        if self._server is not None:
            return self
        _warm_sdk_types()
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.provider = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-provider", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server = self._server
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeProvider is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ----------------------------------------------------------------- scripting
    def script(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def pending(self) -> int:
        """Number of scripted steps not consumed yet."""
        with self._lock:
            return len(self._steps)

    def forget_items(self) -> None:
        with self._lock:
            self.stored.clear()

    @property
    def side_requests(self) -> list[RecordedRequest]:
        return [r for r in list(self.requests) if is_side_request(r)]

    @property
    def summary_requests(self) -> list[RecordedRequest]:
        return [r for r in self.side_requests if (r.body.get("instructions") or "").startswith(SUMMARY_INSTRUCTIONS_START)]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in list(self.requests) if not is_side_request(r)]

    def wait_for_requests(self, n: int, timeout: float = 10) -> list[RecordedRequest]:
        """Block until ``n`` provider requests arrived; raise TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"fake provider: got {len(self.requests)} requests, wanted {n}")
                self._arrived.wait(left)
            return list(self.requests)

    # ----------------------------------------------------------------- internals
    def cached_tokens(self, api: str, body: dict[str, Any]) -> int:
        """What a prompt cache would have served of this request: the longest prefix it shares with
        one of the last 8 requests, in tokens (OpenAI's 1,024-token minimum is left out, so small
        test prompts show it too)."""
        prompt = prompt_text(api, body)
        with self._lock:
            best = max((common_prefix(prompt, seen) for seen in self._recent_prompts), default=0)
            self._recent_prompts.append(prompt)
        return _tokens(prompt[:best])

    def _record(self, req: RecordedRequest) -> None:
        with self._arrived:
            self.requests.append(req)
            self._arrived.notify_all()

    def _reject(self, req: RecordedRequest, rej: _Rejection) -> None:
        with self._lock:
            req.error = rej.error
            self.rejections.append(req)

    def _next_step(self, req: RecordedRequest) -> Reply | HttpError:
        side = self.side_reply
        if side is not None and is_side_request(req):
            answer = side(req)
            if answer is not None:
                return answer
        with self._lock:
            step = self._steps.popleft() if self._steps else None
        if step is None:
            return HttpError(500, NO_STEP_LEFT, type="server_error")
        if isinstance(step, (Reply, HttpError)):
            return step
        try:
            result = step(req)
        except Exception as exc:  # noqa: BLE001 - surface test bugs loudly
            return HttpError(500, f"fake provider: scripted callable raised {exc!r}")
        if not isinstance(result, (Reply, HttpError)):
            return HttpError(500, f"fake provider: scripted callable returned {result!r}")
        return result

    def _count_disconnect(self) -> None:
        with self._lock:
            self.disconnected_early += 1

    # ---------------------------------------------------------- Responses checks
    def _validate_responses(self, body: dict[str, Any]) -> None:
        self._check_common(body)
        raw = body.get("input", [])
        if isinstance(raw, str):
            return
        if not isinstance(raw, list):
            raise _Rejection(400, "Invalid type for 'input': expected one of a string or array of input items,"
                             f" but got {type(raw).__name__} instead.", "input", "invalid_type")
        with self._lock:
            stored = dict(self.stored)
            reasoning_of = dict(self._reasoning_of_response)
            unstored = set(self._unstored_ids)

        # 1. resolve references and inline ids
        resolved: list[tuple[dict[str, Any], str | None]] = []  # (item, id it carries)
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise _Rejection(400, f"Invalid type for 'input[{i}]': expected an object.", f"input[{i}]",
                                 "invalid_type")
            item_id = item.get("id") if isinstance(item.get("id"), str) else None
            if item.get("type") == "item_reference":
                if item_id is None or item_id not in stored:
                    raise self._not_found(item_id or "", unstored)
                resolved.append((stored[item_id], item_id))
            elif item_id is not None and item_id.startswith(_STORED_PREFIXES):
                if item_id not in stored:
                    raise self._not_found(item_id, unstored)
                resolved.append((item, item_id))
            else:
                resolved.append((item, item_id))

        # 2. stored message / function_call needs its reasoning item earlier
        seen_ids: set[str] = set()
        for item, item_id in resolved:
            kind = item.get("type", "message")
            if item_id is not None and item_id in stored and kind in ("message", "function_call"):
                rs = reasoning_of.get(str(stored[item_id].get("response_id")))
                if rs is not None and rs not in seen_ids:
                    raise _Rejection(400, f"Item '{item_id}' of type '{kind}' was provided without its required"
                                     f" 'reasoning' item: '{rs}'.", "input")
            if item_id is not None:
                seen_ids.add(item_id)

        # 3. every function_call_output answers an earlier function_call
        calls_seen: set[str] = set()
        for item, _ in resolved:
            kind = item.get("type")
            if kind == "function_call":
                calls_seen.add(str(item.get("call_id")))
            elif kind == "function_call_output" and str(item.get("call_id")) not in calls_seen:
                raise _Rejection(400, "No tool call found for function call output with call_id"
                                 f" {item.get('call_id')}.", "input")

        # 4. every function_call has a later function_call_output
        for pos, (item, _) in enumerate(resolved):
            if item.get("type") != "function_call":
                continue
            call_id = item.get("call_id")
            if not any(o.get("type") == "function_call_output" and o.get("call_id") == call_id
                       for o, _ in resolved[pos + 1 :]):
                raise _Rejection(400, f"No tool output found for function call {call_id}.", "input")

        # 5. optional: a reasoning item needs a following output item
        if self.strict_reasoning_followup:
            for pos, (item, item_id) in enumerate(resolved):
                if item.get("type") != "reasoning":
                    continue
                nxt = resolved[pos + 1][0] if pos + 1 < len(resolved) else None
                if nxt is None or (nxt.get("type", "message") == "message"
                                   and nxt.get("role") in ("user", "developer", "system")):
                    raise _Rejection(400, f"Item '{item_id or 'rs_unknown'}' of type 'reasoning' was provided"
                                     " without its required following item.", "input")

    @staticmethod
    def _not_found(item_id: str, unstored: set[str]) -> _Rejection:
        suffix = _NOT_PERSISTED if item_id in unstored else ""
        return _Rejection(404, f"Item with id '{item_id}' not found.{suffix}", "input")

    def _check_common(self, body: dict[str, Any]) -> None:
        if not body.get("model"):
            raise _Rejection(400, "Missing required parameter: 'model'.", "model", "missing_required_parameter")
        if self.strict_models and body["model"] not in self.models:
            raise _Rejection(404, f"The model `{body['model']}` does not exist or you do not have access to it.",
                             None, "model_not_found")
        if not self.supports_tools and body.get("tools"):
            raise _Rejection(400, "tools is not supported with this model", "tools", "unsupported_parameter")

    def _store_output(self, response_id: str, output: list[dict[str, Any]], store: bool) -> None:
        with self._lock:
            for item in output:
                if item["type"] == "reasoning":
                    self._reasoning_of_response[response_id] = item["id"]
                if store:
                    self.stored[item["id"]] = {**item, "response_id": response_id}
                else:
                    self._unstored_ids.add(item["id"])

    # --------------------------------------------------------------- Chat checks
    def _validate_chat(self, body: dict[str, Any]) -> None:
        self._check_common(body)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _Rejection(400, "Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
        open_idx: int | None = None  # index of the assistant message whose tool calls are being answered
        open_ids: list[str] = []
        answered: set[str] = set()

        def close_open() -> None:
            missing = [c for c in open_ids if c not in answered]
            if open_idx is not None and missing:
                raise _Rejection(400, "An assistant message with 'tool_calls' must be followed by tool messages"
                                 " responding to each 'tool_call_id'. The following tool_call_ids did not have"
                                 f" response messages: {', '.join(missing)}", f"messages.[{open_idx}].role")

        for i, msg in enumerate(messages):
            role = msg.get("role") if isinstance(msg, dict) else None
            if role == "tool":
                if open_idx is None or msg.get("tool_call_id") not in open_ids:
                    raise _Rejection(400, "Invalid parameter: messages with role 'tool' must be a response to a"
                                     " preceeding message with 'tool_calls'.", f"messages.[{i}].role")
                answered.add(str(msg.get("tool_call_id")))
                continue
            close_open()
            open_idx, open_ids, answered = None, [], set()
            if role == "assistant" and msg.get("tool_calls"):
                open_idx = i
                open_ids = [str(tc.get("id")) for tc in msg["tool_calls"] if isinstance(tc, dict)]
        close_open()


# ======================================================================= HTTP
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as a real provider's server sends each event at once: with Nagle, a small write
    # (the chunked body's end) waits for the client's delayed ACK, ~40 ms, before a client that
    # reads the response to its end (the SDK, and our server to keep the connection) sees it.
    disable_nagle_algorithm = True
    server: _Server

    @property
    def fake(self) -> FakeProvider:
        return self.server.provider

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def setup(self) -> None:  # one handler per accepted connection
        super().setup()
        with self.fake._lock:
            self.fake._conns.add(self.connection)
            self.fake.connections += 1

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._conns.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    # ------------------------------------------------------------- plumbing
    def _send_bytes(self, status: int, data: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", "req_" + _hex(32))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(obj).encode(), "application/json", extra)

    def _send_text(self, status: int, text: str) -> None:
        self._send_bytes(status, text.encode(), "text/plain; charset=utf-8")

    def _send_http_error(self, err: HttpError) -> None:
        extra: dict[str, str] = {}
        if err.retry_after is not None:
            ra = err.retry_after
            extra["retry-after"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        if err.body_text is not None:
            self._send_bytes(err.status, err.body_text.encode(), "text/plain; charset=utf-8", extra)
        else:
            self._send_json(err.status, err.body(), extra)

    def _client_gone(self, wait: float = 0.0) -> bool:
        try:
            ready, _, _ = select.select([self.connection], [], [], wait)
            if not ready:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", "req_" + _hex(32))
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        if self._client_gone():
            raise _ClientGone
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise _ClientGone from exc

    def _end_chunks(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _drop_connection(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _hang(self) -> None:
        """Send nothing more until the client disconnects (_ClientGone) or stop() (_Stopped)."""
        while not self.fake._stopping.is_set():
            if self._client_gone(wait=0.05):
                if self.fake._stopping.is_set():
                    break
                raise _ClientGone
        raise _Stopped

    def _pause(self, delay: float) -> None:
        if delay > 0 and self.fake._stopping.wait(delay):
            raise _Stopped

    def _run_stream(self, events: list[bytes], reply: Reply, error_event: bytes | None) -> None:
        """Write SSE events honouring delay/break_after/error_after/hang_after."""
        last = len(events) - 1  # a fault scheduled past the end still happens before the final event

        def due(after: int | None, n: int) -> bool:
            return after is not None and n >= min(after, last)

        self._start_stream()
        try:
            self._pause(reply.think)
            for n, ev in enumerate(events):
                if due(reply.break_after, n):
                    self._drop_connection()
                    return
                if due(reply.error_after, n) and error_event is not None:
                    self._chunk(error_event)
                    self._end_chunks()
                    return
                if due(reply.hang_after, n):
                    self._hang()
                if due(reply.garbage_after, n):
                    self._chunk(GARBAGE_SSE)
                    self._end_chunks()
                    return
                if n > 0:
                    self._pause(reply.delay)
                self._chunk(ev)
            self._end_chunks()
        except _ClientGone:
            if not self.fake._stopping.is_set():
                self.fake._count_disconnect()
            self.close_connection = True
        except _Stopped:
            self._drop_connection()

    def _read_body(self) -> tuple[Any, bool]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None, True
        try:
            return json.loads(raw), True
        except ValueError:
            return None, False

    # ------------------------------------------------------------- routing
    def _refused_key(self, req: RecordedRequest) -> bool:
        """`fake.api_key` set and not the request's bearer token: the real API's 401, sent."""
        want = self.fake.api_key
        auth = req.headers.get("authorization", "")
        if want is None or auth == f"Bearer {want}":
            return False
        with self.fake._lock:
            self.fake.unauthorized.append(req)
        given = auth.removeprefix("Bearer ")
        shown = f"{given[:3]}{'*' * 4}{given[-4:]}" if len(given) > 8 else "(none)"
        self._send_json(401, {"error": {
            "message": f"Incorrect API key provided: {shown}. You can find your API key in your account settings.",
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}})
        return True

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self._refused_key(RecordedRequest(path=self.path, headers=headers, body=None, api="chat", method="GET")):
            return
        if path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.fake.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_text(404, "404 page not found")

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        api: Literal["responses", "chat"]
        if path == "/v1/responses":
            api = "responses"
        elif path == "/v1/chat/completions":
            api = "chat"
        else:
            self._read_body()
            self._send_text(404, "404 page not found")
            return
        body, ok = self._read_body()
        req = RecordedRequest(path=self.path, headers={k.lower(): v for k, v in self.headers.items()},
                              body=body, api=api, method="POST")
        if self._refused_key(req):
            return
        fake = self.fake
        fake._record(req)
        if api == "responses" and not fake.responses_route:
            self._send_text(404, "404 page not found")
            return
        try:
            if not ok or not isinstance(body, dict):
                raise _Rejection(400, "We could not parse the JSON body of your request. (HINT: This likely means"
                                 " you aren't using your HTTP library correctly. The OpenAI API expects a JSON"
                                 " payload, but what was sent was not valid JSON.)", None)
            try:
                (sdk_types.check_responses if api == "responses" else sdk_types.check_chat)(body)
            except sdk_types.Rejected as bad:
                raise _Rejection(400, bad.message, bad.param, bad.code) from None
            if api == "responses":
                fake._validate_responses(body)
            else:
                fake._validate_chat(body)
        except _Rejection as rej:
            fake._reject(req, rej)
            self._send_json(rej.status, {"error": rej.error})
            return
        step = fake._next_step(req)
        if isinstance(step, HttpError):
            self._send_http_error(step)
            return
        if api == "responses":
            self._answer_responses(body, step)
        else:
            self._answer_chat(body, step)

    def _answer_plain(self, reply: Reply, payload: dict[str, Any]) -> None:
        """Non-streaming answer: faults map to a dropped connection / 500 / hang."""
        try:
            self._pause(reply.delay)
            if reply.break_after is not None:
                self._drop_connection()
                return
            if reply.hang_after is not None:
                self._hang()
        except _ClientGone:
            if not self.fake._stopping.is_set():
                self.fake._count_disconnect()
            self.close_connection = True
            return
        except _Stopped:
            self._drop_connection()
            return
        if reply.error_after is not None:
            self._send_json(500, HttpError(500, reply.error_message).body())
            return
        self._send_json(200, payload)

    # ------------------------------------------------------------- Responses
    def _answer_responses(self, body: dict[str, Any], reply: Reply) -> None:
        rid = "resp_" + _hex(48)
        created = int(time.time())
        want_encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
        store = body.get("store", True) is not False

        output: list[dict[str, Any]] = []
        if reply.reasoning is not None or reply.encrypted is not None:
            output.append({
                "id": "rs_" + _hex(48),
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.reasoning}] if reply.reasoning else [],
                "encrypted_content": reply.encrypted if want_encrypted else None,
            })
        if reply.text is not None or reply.refusal is not None or (not reply.calls and not output):
            content: list[dict[str, Any]] = []
            if reply.text is not None or reply.refusal is None:
                content.append({"type": "output_text", "text": reply.text or "", "annotations": [], "logprobs": []})
            if reply.refusal is not None:
                content.append({"type": "refusal", "refusal": reply.refusal})
            output.append({
                "id": "msg_" + _hex(48),
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": content,
            })
        for call in reply.calls:
            output.append({
                "id": "fc_" + _hex(48),
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments_json,
                "call_id": call.call_id,
                "name": call.name,
            })

        reasoning_tokens = _tokens(reply.reasoning or "")
        if reply.usage is not None:
            in_tok, out_tok = reply.usage
        else:
            in_tok = _tokens(json.dumps(body.get("input", "")) + (body.get("instructions") or ""))
            out_tok = (reasoning_tokens + _tokens(reply.text or "") + _tokens(reply.refusal or "")
                       + sum(_tokens(c.arguments_json) for c in reply.calls))
        usage = {
            "input_tokens": in_tok,
            "input_tokens_details": {"cached_tokens": min(in_tok, self.fake.cached_tokens("responses", body)), "cache_write_tokens": 0},
            "output_tokens": out_tok,
            "output_tokens_details": {"reasoning_tokens": min(reasoning_tokens, out_tok)},
            "total_tokens": in_tok + out_tok,
        }

        def response(status: str, items: list[dict[str, Any]], use: dict[str, Any] | None,
                     error: dict[str, Any] | None = None) -> dict[str, Any]:
            tools = [{"type": "function", "name": t.get("name"), "description": t.get("description"),
                      "parameters": t.get("parameters"), "strict": t.get("strict", True)}
                     if t.get("type") == "function" else t for t in body.get("tools") or []]
            return {
                "id": rid,
                "object": "response",
                "created_at": created,
                "status": status,
                "background": False,
                "completed_at": int(time.time()) if status == "completed" else None,
                "error": error,
                "incomplete_details": None,
                "instructions": body.get("instructions"),
                "max_output_tokens": body.get("max_output_tokens"),
                "max_tool_calls": None,
                "model": body.get("model"),
                "output": items,
                "parallel_tool_calls": body.get("parallel_tool_calls", True),
                "previous_response_id": body.get("previous_response_id"),
                "prompt_cache_key": body.get("prompt_cache_key"),
                "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
                "safety_identifier": None,
                "service_tier": "default",
                "store": store,
                "temperature": body.get("temperature", 1.0),
                "text": {"format": {"type": "text"}, "verbosity": "medium"},
                "tool_choice": body.get("tool_choice", "auto"),
                "tools": tools,
                "top_logprobs": 0,
                "top_p": body.get("top_p", 1.0),
                "truncation": "disabled",
                "usage": use,
                "user": None,
                "metadata": body.get("metadata") or {},
            }

        def finish() -> None:
            self.fake._store_output(rid, output, store)

        if not body.get("stream"):
            if reply.error_after is None and reply.break_after is None and reply.hang_after is None:
                finish()
            self._answer_plain(reply, response("completed", output, usage))
            return

        events: list[tuple[str, dict[str, Any]]] = []

        def ev(kind: str, **data: Any) -> None:
            events.append((kind, {"type": kind, **data}))

        ev("response.created", response=response("in_progress", [], None))
        ev("response.in_progress", response=response("in_progress", [], None))
        for idx, item in enumerate(output):
            iid = item["id"]
            if item["type"] == "reasoning":
                ev("response.output_item.added", output_index=idx,
                   item={"id": iid, "type": "reasoning", "summary": []})
                for s_idx, part in enumerate(item["summary"]):
                    ev("response.reasoning_summary_part.added", item_id=iid, output_index=idx,
                       summary_index=s_idx, part={"type": "summary_text", "text": ""})
                    for piece in _split(part["text"], reply.chunks):
                        ev("response.reasoning_summary_text.delta", item_id=iid, output_index=idx,
                           summary_index=s_idx, delta=piece)
                    ev("response.reasoning_summary_text.done", item_id=iid, output_index=idx,
                       summary_index=s_idx, text=part["text"])
                    ev("response.reasoning_summary_part.done", item_id=iid, output_index=idx,
                       summary_index=s_idx, part=dict(part))
            elif item["type"] == "message":
                ev("response.output_item.added", output_index=idx,
                   item={**item, "status": "in_progress", "content": []})
                for c_idx, part in enumerate(item["content"]):
                    if part["type"] == "refusal":
                        ev("response.content_part.added", item_id=iid, output_index=idx, content_index=c_idx,
                           part={"type": "refusal", "refusal": ""})
                        for piece in _split(part["refusal"], reply.chunks):
                            ev("response.refusal.delta", item_id=iid, output_index=idx, content_index=c_idx,
                               delta=piece)
                        ev("response.refusal.done", item_id=iid, output_index=idx, content_index=c_idx,
                           refusal=part["refusal"])
                    else:
                        ev("response.content_part.added", item_id=iid, output_index=idx, content_index=c_idx,
                           part={"type": "output_text", "text": "", "annotations": [], "logprobs": []})
                        for piece in _split(part["text"], reply.chunks):
                            ev("response.output_text.delta", item_id=iid, output_index=idx, content_index=c_idx,
                               delta=piece, logprobs=[])
                        ev("response.output_text.done", item_id=iid, output_index=idx, content_index=c_idx,
                           text=part["text"], logprobs=[])
                    ev("response.content_part.done", item_id=iid, output_index=idx, content_index=c_idx,
                       part=dict(part))
            else:
                ev("response.output_item.added", output_index=idx,
                   item={**item, "status": "in_progress", "arguments": ""})
                for piece in _split(item["arguments"], reply.chunks):
                    ev("response.function_call_arguments.delta", item_id=iid, output_index=idx, delta=piece)
                ev("response.function_call_arguments.done", item_id=iid, output_index=idx,
                   arguments=item["arguments"])
            ev("response.output_item.done", output_index=idx, item=item)
        ev("response.completed", response=response("completed", output, usage))

        def frame(kind: str, data: dict[str, Any], seq: int) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({**data, 'sequence_number': seq})}\n\n".encode()

        frames = [frame(kind, data, seq) for seq, (kind, data) in enumerate(events)]
        error_frame: bytes | None = None
        if reply.error_after is not None:
            seq = min(reply.error_after, len(frames) - 1)
            if reply.error_style == "failed":
                failed = response("failed", [], None, {"code": "server_error", "message": reply.error_message})
                error_frame = frame("response.failed", {"type": "response.failed", "response": failed}, seq)
            elif reply.error_style == "nested":
                error_frame = frame("error", {"type": "error", "error": {
                    "type": "server_error", "code": "server_error", "message": reply.error_message,
                    "param": None}}, seq)
            else:
                error_frame = frame("error", {"type": "error", "code": "server_error",
                                              "message": reply.error_message, "param": None}, seq)
        # Items exist server-side once the response completes; a faulty stream stores nothing.
        if reply.error_after is None and reply.break_after is None and reply.hang_after is None and reply.garbage_after is None:
            finish()
        self._run_stream(frames, reply, error_frame)

    # ------------------------------------------------------------- Chat
    def _answer_chat(self, body: dict[str, Any], reply: Reply) -> None:
        cid = "chatcmpl-" + _hex(28)
        created = int(time.time())
        model = body.get("model")
        finish_reason = "tool_calls" if reply.calls else "stop"
        if reply.usage is not None:
            prompt_tok, completion_tok = reply.usage
        else:
            prompt_tok = _tokens(json.dumps(body.get("messages", [])))
            completion_tok = (_tokens(reply.reasoning or "") + _tokens(reply.text or "") + _tokens(reply.refusal or "")
                              + sum(_tokens(c.arguments_json) for c in reply.calls))
        usage = {"prompt_tokens": prompt_tok, "completion_tokens": completion_tok,
                 "total_tokens": prompt_tok + completion_tok,
                 "prompt_tokens_details": {"cached_tokens": min(prompt_tok, self.fake.cached_tokens("chat", body))}}
        tool_calls = [{"id": c.call_id, "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments_json}} for c in reply.calls]

        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": reply.refusal}
            if reply.reasoning is not None:
                message["reasoning_content"] = reply.reasoning
            if tool_calls:
                message["tool_calls"] = tool_calls
            payload = {
                "id": cid, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
                "usage": usage, "service_tier": "default", "system_fingerprint": "fp_fake",
            }
            self._answer_plain(reply, payload)
            return

        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            obj: dict[str, Any] = {
                "id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "service_tier": "default", "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
            if include_usage:
                obj["usage"] = None
            return b"data: " + json.dumps(obj).encode() + b"\n\n"

        # A refusing answer opens with content null and an empty refusal, as the live API does.
        opening = {"content": None, "refusal": ""} if reply.refusal is not None and reply.text is None else {"content": "", "refusal": None}
        frames = [chunk({"role": "assistant", **opening})]
        for piece in _split(reply.reasoning or "", reply.chunks):
            frames.append(chunk({"reasoning_content": piece}))
        for piece in _split(reply.text or "", reply.chunks):
            frames.append(chunk({"content": piece}))
        for piece in _split(reply.refusal or "", reply.chunks):
            frames.append(chunk({"refusal": piece}))
        for k, c in enumerate(reply.calls):
            frames.append(chunk({"tool_calls": [{"index": k, "id": c.call_id, "type": "function",
                                                 "function": {"name": c.name, "arguments": ""}}]}))
            for piece in _split(c.arguments_json, reply.chunks):
                frames.append(chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]}))
        frames.append(chunk({}, finish_reason))
        if include_usage:
            frames.append(b"data: " + json.dumps({
                "id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "service_tier": "default", "system_fingerprint": "fp_fake", "choices": [], "usage": usage,
            }).encode() + b"\n\n")
        frames.append(b"data: [DONE]\n\n")
        error_frame = b"data: " + json.dumps({"error": {
            "message": reply.error_message, "type": "server_error", "param": None, "code": None}}).encode() + b"\n\n"
        self._run_stream(frames, reply, error_frame)
