"""Every response stream is closed by the provider itself, however it ends (issue 36, item 18).

A provider response is read through a chain of async generators: ours (OpenAIProvider.stream, its
attempt, the wire parser, the byte caps of agent/provider/bounded_stream.py), the SDK's
(`AsyncStream`, its SSE decoder) and httpx2's (the response's bytes). One left at a yield is
closed by the garbage collector whenever it runs, on whatever loop is running then (or on none:
"coroutine ... was never awaited", "aclose(): asynchronous generator is already running"), and
its connection is not released until then. These tests drive the provider against the real HTTP
fake the way agent/loop.py does (it returns on Completed without closing the stream) and fail if
the collector had to close any generator of ours, the SDK's or httpx2's response.

Left out: httpx2's transport iterates httpcore2's pooled stream without closing that generator
(httpx2/_transports/default.py, `AsyncResponseStream.__aiter__`); the response's own close has
released its connection by then, and no caller can reach that generator to close it.
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.agent.provider.base import Completed, ProviderError, ProviderEvent, ProviderRequest, ToolSpec
from shiro_neko.agent.provider.openai_provider import EndpointConfig, OpenAIProvider
from tests.fake_provider import FakeProvider, HttpError, Reply
from tests.support.builders import user

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-stream-closing-test-key"
# Where the generators that must be closed explicitly live (module file paths).
OWNED = ("shiro_neko", "/server/agent/", "/openai/", "/httpx2/_models.py", "/httpx2/_client.py")


class LeftToCollector:
    """The async generators first run while this is installed that reached the event loop's
    finalizer hook unclosed: the ones the garbage collector closed, not their owner."""

    def __init__(self) -> None:
        self.names: list[str] = []
        # By id: a generator's weak references are cleared before its finalizer runs.
        self._ours: set[int] = set()

    def __enter__(self) -> "LeftToCollector":
        self._hooks = sys.get_asyncgen_hooks()
        firstiter, finalizer = self._hooks.firstiter, self._hooks.finalizer

        def first(agen: Any) -> None:
            self._ours.add(id(agen))
            if firstiter is not None:
                firstiter(agen)

        def final(agen: Any) -> None:  # the interpreter calls it only for a generator not closed
            if id(agen) in self._ours and any(part in agen.ag_code.co_filename for part in OWNED):
                self.names.append(f"{agen.ag_code.co_qualname} ({agen.ag_code.co_filename.rsplit('/', 2)[-2]})")
            if finalizer is not None:
                finalizer(agen)  # closed all the same (the loop's hook schedules its aclose)

        sys.set_asyncgen_hooks(firstiter=first, finalizer=final)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.collect()
        sys.set_asyncgen_hooks(*self._hooks)


def request(tools: bool = False) -> ProviderRequest:
    specs = [ToolSpec("list_files", "list the files", {"type": "object", "properties": {}})] if tools else []
    return ProviderRequest("m", "be brief", [user("hi")], specs, [])


async def turn(provider: OpenAIProvider, req: ProviderRequest) -> Completed:
    """What agent/loop.py does with a provider stream: read it, and return on Completed."""
    async for event in provider.stream(req):
        if isinstance(event, Completed):
            return event
    raise AssertionError("no Completed")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SHIRO_PROVIDER_READ_TIMEOUT", "1")
    yield


_made: list[OpenAIProvider] = []


def provider(fake: FakeProvider, wire: str, **config: Any) -> OpenAIProvider:
    made = OpenAIProvider(EndpointConfig(model="m", base_url=fake.base_url, wire_api=wire,  # type: ignore[arg-type]
                                         backoff_base=0.01, **config))
    _made.append(made)
    return made


@pytest.fixture(autouse=True)
async def close_providers() -> AsyncIterator[None]:
    """The HTTP clients closed too (OpenAIProvider.aclose), so the pooled connections are no
    "unclosed transport" warning in a later test."""
    yield
    while _made:
        await _made.pop().aclose()


TEXT = "one two three four five six"
# name: (what the fake answers, endpoint settings, the error the turn ends with or None)
ENDINGS: dict[str, tuple[list[Any], dict[str, Any], str | None]] = {
    "normal end": ([Reply(text=TEXT)], {}, None),
    "error event mid-stream": ([Reply(text=TEXT, chunks=6, error_after=6)], {}, "in-stream error"),
    "connection reset mid-stream": ([Reply(text=TEXT, chunks=6, break_after=6)], {}, "could not reach"),
    "malformed event mid-stream": ([Reply(text=TEXT, chunks=6, garbage_after=6)], {}, "malformed stream event"),
    "stall mid-stream": ([Reply(text=TEXT, chunks=6, hang_after=6)], {}, "read timeout"),
    "size cap": ([Reply(text="y" * 200_000, chunks=50)], {"max_response_bytes": 20_000}, "maxResponseBytes"),
    "event cap": ([Reply(text="z" * 100_000, chunks=1)], {"max_event_bytes": 20_000}, "maxEventBytes"),
    "retry after a fault before output": ([Reply(text="lost", garbage_after=0), Reply(text=TEXT)], {}, None),
    "retry after a 500": ([HttpError(500, "boom"), Reply(text=TEXT)], {}, None),
}


@pytest.mark.parametrize("wire", ["responses", "chat"])
@pytest.mark.parametrize("ending", ENDINGS)
async def test_the_provider_closes_every_stream_it_reads(fake: FakeProvider, env: None, wire: str, ending: str) -> None:
    answers, config, error = ENDINGS[ending]
    fake.script(*answers)
    p = provider(fake, wire, **config)
    with LeftToCollector() as left:
        if error is None:
            completed = await turn(p, request())
            assert completed.message.content[-1].text == TEXT  # type: ignore[union-attr]
        else:
            with pytest.raises(ProviderError, match=error):
                await turn(p, request())
    assert left.names == [], f"{ending}: closed by the garbage collector, not the provider"


async def test_the_fallbacks_close_the_stream_they_leave(fake: FakeProvider, env: None) -> None:
    """The tool-less retry and the Chat Completions fallback of `wireApi: auto`."""
    fake.supports_tools = False
    fake.responses_route = False
    fake.script(Reply(text=TEXT))
    with LeftToCollector() as left:
        completed = await turn(provider(fake, "auto"), request(tools=True))
        assert completed.message.content[-1].text == TEXT  # type: ignore[union-attr]
    assert [r.api for r in fake.requests] == ["responses", "chat", "chat"]
    assert left.names == []


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_a_user_abort_mid_stream_closes_the_stream(fake: FakeProvider, env: None, wire: str) -> None:
    fake.script(Reply(text=TEXT, chunks=6, delay=0.2))
    p = provider(fake, wire)
    first = asyncio.Event()
    seen: list[ProviderEvent] = []

    async def read() -> None:
        async for event in p.stream(request()):
            seen.append(event)
            first.set()

    with LeftToCollector() as left:
        task = asyncio.create_task(read())
        await asyncio.wait_for(first.wait(), 10)
        task.cancel()  # what the service does on shiro.abort
        with pytest.raises(asyncio.CancelledError):
            await task
    assert seen and not any(isinstance(e, Completed) for e in seen)
    assert left.names == []


async def test_a_consumer_that_closes_the_stream_early_closes_the_response(fake: FakeProvider, env: None) -> None:
    fake.script(Reply(text=TEXT, chunks=6))
    events = provider(fake, "responses").stream(request())
    with LeftToCollector() as left:
        assert not isinstance(await events.__anext__(), Completed)
        await events.aclose()  # type: ignore[attr-defined]
    assert left.names == []


FRESH_PROCESS = """
import asyncio, gc, sys
from shiro_neko.agent.provider.base import Completed, ProviderError, ProviderRequest
from shiro_neko.agent.provider.openai_provider import EndpointConfig, OpenAIProvider
from tests.support.builders import user
from tests.unit.test_stream_closing import LeftToCollector

async def main():
    assert "openai" not in sys.modules  # the first request takes the early path (early_request.py)
    p = OpenAIProvider(EndpointConfig(model="m", base_url=sys.argv[1], wire_api="responses"))
    with LeftToCollector() as left:
        try:
            async for event in p.stream(ProviderRequest("m", "be brief", [user("hi")], [], [])):
                if isinstance(event, Completed):
                    break
        except ProviderError as exc:
            print("error:", exc.message)
        else:
            print("completed")
    print("left:", left.names)

asyncio.run(main())
"""


@pytest.mark.parametrize("answer, outcome", [
    (Reply(text=TEXT), "completed"),
    (Reply(text=TEXT, chunks=6, error_after=6), "error: fake provider: scripted in-stream error"),
])
def test_the_early_request_closes_its_stream(fake: FakeProvider, answer: Reply, outcome: str) -> None:
    """A fresh process's first request, sent before the SDK is imported, read by the SDK."""
    fake.script(answer)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    environ.update(OPENAI_API_KEY=KEY, SHIRO_PROVIDER_READ_TIMEOUT="5")
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", FRESH_PROCESS, fake.base_url],
                          cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [outcome, "left: []"], done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr and "never awaited" not in done.stderr, done.stderr
