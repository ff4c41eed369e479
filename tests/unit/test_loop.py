"""The agent loop without LSP: a scripted provider, a list sink, real tools on a temp dir."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from tests.support.sink import ListSink
from shiro_neko.agent.provider.base import ProviderError, ProviderRequest
from shiro_neko.agent.status import status_payload
from shiro_neko.model.transcript import (
    AssistantMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
    pending_calls,
    shown,
)
from shiro_neko.config import Settings
from tests.support.builders import assistant, call
from tests.support.scripted import ScriptedProvider, make_session


def assert_every_call_answered(request: ProviderRequest) -> None:
    calls = [p.tool_call_id for m in request.messages if isinstance(m, AssistantMessage) for p in m.content if isinstance(p, ToolCallPart)]
    results = [r.tool_call_id for m in request.messages if isinstance(m, ToolMessage) for r in m.content]
    assert sorted(calls) == sorted(results)


async def test_tool_loop_and_transcript_shape(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    provider = ScriptedProvider(assistant(call("c1", path="a.txt")), assistant("it says alpha"))
    session = make_session(tmp_path, provider, ListSink())
    outcome = await session.turns.submit("read a").done
    assert outcome.status == "completed" and outcome.text == "it says alpha"
    roles = [type(m).__name__ for m in shown(session.messages)]  # without the context messages
    assert roles == ["UserMessage", "AssistantMessage", "ToolMessage", "AssistantMessage"]
    for request in provider.requests:
        assert_every_call_answered(request)


async def test_queue_runs_in_order_and_abort_clears_it(tmp_path: Path) -> None:
    provider = ScriptedProvider(assistant("one two three four five six seven"), assistant("never"), delay=0.05)
    sink = ListSink()
    session = make_session(tmp_path, provider, sink)
    first = session.turns.submit("first")
    await asyncio.sleep(0.12)
    second = session.turns.submit("second")
    assert [e["position"] for e in sink.events if e["type"] == "queued"] == [1]
    assert session.turns.abort() == (True, 1)
    assert (await first.done).status == "aborted"
    assert (await second.done).status == "aborted"
    assert len(provider.requests) == 1
    # The interrupted message keeps its text and has no item id.
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.content[0].text.startswith("one")
    assert last.content[0].item_id is None


async def test_a_refusal_ends_completed_and_refused_and_an_interrupted_one_stays_a_refusal(tmp_path: Path) -> None:
    declined = AssistantMessage(content=[TextPart(text="I can't do that", refusal=True)])
    provider = ScriptedProvider(declined, assistant("ok then"), AssistantMessage(content=[TextPart(text="no no no no no no", refusal=True)]),
                                delay=0.05)
    sink = ListSink()
    session = make_session(tmp_path, provider, sink)
    outcome = await session.turns.submit("do it").done
    assert outcome.status == "completed" and outcome.refused and outcome.text == "I can't do that"
    [end] = [e for e in sink.events if e["type"] == "turn_end"]
    assert end["refused"] is True
    assert "".join(e["text"] for e in sink.events if e["type"] == "text_delta").strip() == "I can't do that"
    assert not (await session.turns.submit("something else").done).refused
    assert "refused" not in [e for e in sink.events if e["type"] == "turn_end"][-1]
    third = session.turns.submit("again")
    await asyncio.sleep(0.12)
    session.turns.abort()
    assert (await third.done).status == "aborted"
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.content[0].refusal and last.content[0].text.startswith("no")


async def test_denied_approval_is_an_error_result(tmp_path: Path) -> None:
    provider = ScriptedProvider(assistant(call("c1", "run_command", command="echo hi")), assistant("ok"))
    sink = ListSink(answers=["deny"])
    session = make_session(tmp_path, provider, sink)
    await session.turns.submit("run").done
    result = shown(session.messages)[2]
    assert isinstance(result, ToolMessage) and result.content[0].is_error and "denied" in result.content[0].output


async def test_stopping_keeps_a_waiting_approval_pending_and_resume_asks_again(tmp_path: Path) -> None:
    provider = ScriptedProvider(assistant(call("c1", "write_file", path="x.txt", content="x")), assistant("written"))
    asked = asyncio.Event()

    class SlowSink(ListSink):
        async def approve(self, request):  # type: ignore[override]
            asked.set()
            await asyncio.sleep(60)
            return "allow"

    session = make_session(tmp_path, provider, SlowSink())
    item = session.turns.submit("write x")
    await asked.wait()
    await session.turns.stop()
    assert (await item.done).status == "aborted"
    assert [c.tool_call_id for c in pending_calls(session.messages)] == ["c1"]
    assert not (tmp_path / "x.txt").exists()
    # "Resume": a new session object over the same messages; a server-started turn asks again.
    sink = ListSink(answers=["allow"])
    resumed = make_session(tmp_path, provider, sink)
    resumed.messages = list(session.messages)
    outcome = await resumed.turns.submit(None).done
    assert outcome.status == "completed" and outcome.text == "written"
    assert sink.asked and (tmp_path / "x.txt").read_text() == "x"
    assert_every_call_answered(provider.requests[-1])


async def test_new_prompt_denies_a_waiting_call_first(tmp_path: Path) -> None:
    provider = ScriptedProvider(assistant("fine"))
    session = make_session(tmp_path, provider, ListSink())
    session.messages = [UserMessage(content=[TextPart("x")]), assistant(call("c9", "run_command", command="rm -rf /"))]
    await session.turns.submit("never mind").done
    assert_every_call_answered(provider.requests[0])
    denied = session.messages[2]
    assert isinstance(denied, ToolMessage) and "denied" in denied.content[0].output


async def test_provider_error_before_output_ends_turn_with_error(tmp_path: Path) -> None:
    provider = ScriptedProvider(ProviderError("400: nope", status=400))
    session = make_session(tmp_path, provider, ListSink())
    outcome = await session.turns.submit("hi").done
    assert outcome.status == "error" and outcome.error == "400: nope"


@pytest.mark.parametrize("threshold,tokens,level", [(300, 100, "normal"), (300, 200, "amber"), (300, 270, "red")])
async def test_status_levels(tmp_path: Path, threshold: int, tokens: int, level: str) -> None:
    session = make_session(tmp_path, ScriptedProvider(), ListSink(), Settings(compactThreshold=threshold))
    # Compact JSON of one user message is 42 bytes of framing plus the text.
    framing = len('[{"role":"user","content":[{"type":"text","text":""}]}]')
    session.messages = [UserMessage(content=[TextPart("x" * (tokens * 4 - framing))])]
    status = msgspec.to_builtins(status_payload(session))
    assert status["contextTokens"] == tokens and status["level"] == level
    assert status["contextPercent"] == round(tokens * 100 / threshold, 1)
