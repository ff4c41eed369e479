"""The first request of a cold process (agent/provider/early_request.py) against the real HTTP
fake: what it sends and every error it meets are what the SDK's own path sends and raises.

This process has the SDK imported already (so `eligible()` is false and the service takes the
SDK's path); the early path is driven directly. The LSP tests (tests/lsp/test_provider_errors.py,
test_provider_faults.py) spawn fresh servers, whose first request takes it end to end.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from shiro_neko.agent.provider import early_request, wire_responses
from shiro_neko.agent.provider.base import Completed, ProviderError, ProviderRequest
from shiro_neko.agent.provider.openai_provider import EndpointConfig, OpenAIProvider, _encoder
from tests.fake_provider import FakeProvider, HttpError, Reply
from tests.support.builders import user

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-early-request-test-key"
# What describes the client rather than the request: the SDK's telemetry and the transport's own.
TELEMETRY = {"user-agent", "accept-encoding", "connection", "host", "content-length"}


def body() -> dict[str, Any]:
    return wire_responses.request_body(ProviderRequest("m", "be brief", [user("hi")], [], []), store=True)


_made: list[OpenAIProvider] = []


def provider(base_url: str) -> OpenAIProvider:
    made = OpenAIProvider(EndpointConfig(model="m", base_url=base_url, wire_api="responses", store=True))
    _made.append(made)
    return made


@pytest.fixture(autouse=True)
async def close_providers() -> AsyncIterator[None]:
    """Each provider's HTTP client closed after its test: its pooled connections were otherwise
    left to the garbage collector ("unclosed transport" warnings in whichever test ran next)."""
    yield
    while _made:
        await _made.pop().aclose()


def meaningful(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k not in TELEMETRY and not k.startswith("x-stainless-")}


async def events_of(stream: Any) -> list[Any]:
    try:
        return [e async for e in wire_responses.parse_stream(stream, True)]
    finally:
        await stream.close()


async def test_the_early_request_sends_what_the_sdk_sends_and_the_sdk_reads_its_answer(
    fake: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake.script(Reply(text="early"), Reply(text="sdk"))
    early = provider(fake.base_url)
    events = await events_of(await early._open_early(_encoder.encode(body())))
    assert isinstance(events[-1], Completed) and events[-1].message.content[-1].text == "early"
    assert early._client is not None  # the SDK's client now, on the same HTTP client, for the next requests

    sdk = provider(fake.base_url)
    events = await events_of(await sdk._open(body()))
    assert isinstance(events[-1], Completed)
    first, second = fake.requests
    assert first.path == second.path and first.body == second.body
    assert meaningful(first.headers) == meaningful(second.headers)
    assert first.headers["authorization"] == f"Bearer {KEY}"


async def test_the_next_request_of_that_provider_goes_through_the_sdk(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake.script(Reply(text="one"), Reply(text="two"))
    p = provider(fake.base_url)
    await events_of(await p._open_early(_encoder.encode(body())))
    events = [e async for e in p.stream(ProviderRequest("m", "be brief", [user("again")], [], []))]
    assert isinstance(events[-1], Completed) and events[-1].message.content[-1].text == "two"
    assert fake.requests[1].headers["user-agent"].startswith("AsyncOpenAI/Python")  # the SDK sent it


@pytest.mark.parametrize("answer", [
    HttpError(400, "bad input", type="invalid_request_error", code="invalid_value", param="input"),
    HttpError(401, f"Incorrect API key provided: {KEY}", type="invalid_request_error", code="invalid_api_key"),
    HttpError(404, "Item with id 'rs_x' not found.", type="invalid_request_error"),
    HttpError(429, "slow down", type="rate_limit_error", retry_after=2),
    HttpError(500, "boom"),
    HttpError(503, body_text="upstream unavailable"),
])
async def test_an_error_status_is_the_sdks_error(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch, answer: HttpError) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake.script(answer, answer)
    with pytest.raises(ProviderError) as early:
        await provider(fake.base_url)._open_early(_encoder.encode(body()))
    with pytest.raises(ProviderError) as sdk:
        await provider(fake.base_url)._open(body())
    fields = ("message", "status", "code", "param", "retry_after", "retryable", "missing_item")
    assert [getattr(early.value, f) for f in fields] == [getattr(sdk.value, f) for f in fields]
    assert KEY not in early.value.message


async def test_an_endpoint_that_is_not_there_is_the_sdks_connection_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with pytest.raises(ProviderError) as early:
        await provider(url)._open_early(_encoder.encode(body()))
    with pytest.raises(ProviderError) as sdk:
        await provider(url)._open(body())
    assert early.value.message == sdk.value.message and early.value.retryable and sdk.value.retryable


def test_only_a_plain_key_takes_the_early_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    assert "openai" in sys.modules and not early_request.eligible({})  # the SDK is here: its path
    monkeypatch.delitem(sys.modules, "openai")
    assert early_request.eligible({"OPENAI_API_KEY": KEY})
    for name in early_request.SDK_HEADER_VARIABLES:
        assert not early_request.eligible({"OPENAI_API_KEY": KEY, name: "x"})


def test_the_default_endpoint_and_url_joining_are_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    from openai import AsyncOpenAI

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    sdk = AsyncOpenAI(api_key=KEY)
    assert str(sdk._prepare_url("/responses")) == early_request.url_for(None, "/responses")
    for base in ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1/", "https://example.test/openai/deployments/x"):
        sdk = AsyncOpenAI(api_key=KEY, base_url=base)
        assert str(sdk._prepare_url("/chat/completions")) == early_request.url_for(base, "/chat/completions")


FRESH_PROCESS = """
import asyncio, sys
from shiro_neko.agent.provider.base import Completed, ProviderRequest
from shiro_neko.agent.provider.openai_provider import EndpointConfig, OpenAIProvider
from tests.support.builders import user

async def main():
    assert "openai" not in sys.modules
    p = OpenAIProvider(EndpointConfig(model="m", base_url=sys.argv[1], wire_api="responses", store=True))
    events = [e async for e in p.stream(ProviderRequest("m", "be brief", [user("hi")], [], []))]
    assert isinstance(events[-1], Completed) and events[-1].message.content[-1].text == "fresh", events

asyncio.run(main())
"""


def test_a_fresh_process_sends_its_first_request_before_the_sdk_is_imported(
    fake: FakeProvider, tmp_path: Path
) -> None:
    arrived: list[int] = []

    def answer(req: Any) -> Reply:
        arrived.append(time.monotonic_ns())  # one clock for every process (server/startup/trace.py)
        return Reply(text="fresh")

    fake.script(answer)
    trace = tmp_path / "trace"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    env.update(OPENAI_API_KEY=KEY, SHIRO_TRACE=str(trace))
    subprocess.run([sys.executable, "-c", FRESH_PROCESS, fake.base_url], cwd=ROOT, env=env, check=True, timeout=120)
    marks = {name: int(ns) for ns, _, name in (line.split(" ", 2) for line in trace.read_text().splitlines())}
    assert arrived and marks["early-request-sent"] <= arrived[0] < marks["openai-client"]  # the SDK came after
