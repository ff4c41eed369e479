"""Chat turns, the service in-process through the command glue: streaming, tools, queue, abort,
malformed arguments, both wire APIs (tests/lsp/test_chat.py has what needs the wire)."""

from __future__ import annotations

import asyncio
import json

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tests.fake_provider import Call, Reply
from tests.support.service import service_harness


async def test_the_steps_of_a_turn_share_one_provider_connection(harness):
    """A completed response is read to its end, so the next step reuses the connection (no new
    TCP, or TLS, handshake per step)."""
    harness.fake.script(*[Reply(calls=[Call("read_file", {"path": "hello.py"}, f"call_{i}")]) for i in range(3)],
                        Reply(text="read it three times"))
    before = harness.fake.connections
    result = await harness.chat("read hello.py three times")
    assert result["status"] == "completed" and result["text"] == "read it three times"
    assert len(harness.fake.main_requests) >= 4
    # One for the steps, one for the context-window question asked once per endpoint and model
    # (agent/context_window.py, its own short-lived client).
    assert harness.fake.connections - before <= 2


async def test_tool_call_then_answer(harness):
    harness.fake.script(
        Reply(reasoning="look at the file", encrypted="enc-1", calls=[Call("read_file", {"path": "hello.py"}, "call_r1")]),
        Reply(text="It prints hello."),
    )
    result = await harness.chat("what does hello.py do?")
    assert result["status"] == "completed" and result["text"] == "It prints hello."
    events = harness.of_turn(result["turnId"])
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("turn_end")
    assert "reasoning_delta" in kinds
    tool_result = next(e for e in events if e["type"] == "tool_result")
    assert tool_result["toolCallId"] == "call_r1" and "print('hello')" in tool_result["output"]
    assert not tool_result["isError"]
    # The second request refers to the stored reasoning and call by id and carries the output.
    second = harness.fake.requests[1].body["input"]
    # [0] the context message (agent/context_messages.py), [1] the prompt.
    assert [i.get("type") for i in second[2:]] == ["item_reference", "item_reference", "function_call_output"]
    assert second[-1]["call_id"] == "call_r1"
    assert not harness.fake.rejections


async def test_several_calls_in_one_response(harness):
    (harness.root / "a.txt").write_text("alpha\n")
    harness.fake.script(
        Reply(calls=[Call("read_file", {"path": "a.txt"}, "call_a"), Call("list_files", {}, "call_b")]),
        Reply(text="done"),
    )
    result = await harness.chat("look around")
    assert result["status"] == "completed"
    results = [e for e in harness.of_turn(result["turnId"]) if e["type"] == "tool_result"]
    assert [r["toolCallId"] for r in results] == ["call_a", "call_b"]
    outputs = [i for i in harness.fake.requests[1].body["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["call_a", "call_b"]


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_same_scenario_on_both_wire_apis(shiro_home, fake, workspace, wire):
    async with service_harness(fake, shiro_home, workspace, wireApi=wire) as h:
        fake.script(
            Reply(reasoning="hmm", text="Reading.", calls=[Call("read_file", {"path": "hello.py"}, "call_x")]),
            Reply(text="It prints hello."),
        )
        result = await h.chat("what does hello.py do?")
        assert result["status"] == "completed" and result["text"] == "It prints hello."
        assert [r.api for r in fake.requests] == [wire, wire]
        reasoning = [e["text"] for e in h.of_turn(result["turnId"]) if e["type"] == "reasoning_delta"]
        assert "".join(reasoning) == "hmm"  # summary deltas, or `reasoning_content` on Chat Completions
        if wire == "chat":
            messages = fake.requests[1].body["messages"]
            assert messages[0]["role"] == "system"
            # The context message (git status, date) before the prompt, then the dialogue.
            assert [m["role"] for m in messages[1:]] == ["user", "user", "assistant", "tool"]
            assert "<environment_context>" in messages[1]["content"] and messages[2]["content"] == "what does hello.py do?"
            assert messages[3]["tool_calls"][0]["id"] == "call_x"
        assert not fake.rejections


async def test_two_queued_prompts_run_in_order(harness):
    harness.fake.script(Reply(text="first answer", delay=0.05, chunks=6), Reply(text="second"), Reply(text="third"))
    first = harness.start_chat("one")
    await harness.wait_for(lambda: any(e["type"] == "text_delta" for e in harness.events))
    second = harness.start_chat("two")
    third = harness.start_chat("three")
    results = [r for r in await asyncio.gather(first, second, third)]
    texts = [plain["text"] for plain in map(lambda r: r if isinstance(r, dict) else r._asdict(), results)]
    assert texts == ["first answer", "second", "third"]
    queued = [e for e in harness.events if e["type"] == "queued"]
    assert [q["position"] for q in queued] == [1, 2]
    prompts = [r.body["input"][-1]["content"][0]["text"] for r in harness.fake.requests]
    assert prompts == ["one", "two", "three"]
    history = await harness.command("shiro.history")
    assert history["prompts"] == ["one", "two", "three"]


async def test_abort_mid_stream_keeps_text_and_clears_queue(harness):
    harness.fake.script(Reply(text="partial answer that goes on and on", chunks=20, delay=0.1))
    running = harness.start_chat("long one")
    await harness.wait_for(lambda: sum(e["type"] == "text_delta" for e in harness.events) >= 2)
    queued = harness.start_chat("never sent")
    await harness.wait_for(lambda: any(e["type"] == "queued" for e in harness.events))
    aborted = await harness.command("shiro.abort")
    assert aborted == {"aborted": True, "clearedQueued": 1}
    first, second = [r if isinstance(r, dict) else r._asdict() for r in await asyncio.gather(running, queued)]
    assert first["status"] == "aborted" and first["text"]
    assert "partial answer that goes on and on".startswith(first["text"])
    assert second["status"] == "aborted"
    await harness.wait_for(lambda: harness.fake.disconnected_early >= 1)
    assert len(harness.fake.requests) == 1  # the queued prompt never reached the provider
    # The interrupted text is kept: the next request carries it inline, without an id.
    harness.fake.script(Reply(text="ok"))
    await harness.chat("go on")
    sent = harness.fake.requests[1].body["input"]
    assistant = [i for i in sent if i.get("role") == "assistant"]
    assert assistant and assistant[0]["content"] == first["text"] and "id" not in assistant[0]


@pytest.mark.parametrize(
    "arguments",
    [[{"prompt": 5}], [{"promt": "typo"}], ["just a string"], [{"prompt": "a"}, {"prompt": "b"}], None],
)
async def test_malformed_arguments_are_invalid_params(harness, arguments):
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await harness.command("shiro.chat", *(arguments or []))
    assert "shiro.chat" in caught.value.message and len(caught.value.message) > 20
    assert harness.fake.requests == []
    history = await harness.command("shiro.history")
    assert history["prompts"] == []
    status = await harness.command("shiro.status")
    assert status["running"] is False and status["contextTokens"] == 0


async def test_status_notifications_around_a_turn(harness):
    harness.fake.script(Reply(text="hello", usage=(120, 7)))
    result = await harness.chat("hi")
    mine = [s for s in harness.statuses if s["sessionId"] == result["sessionId"]]
    assert mine[0]["running"] is True and mine[-1]["running"] is False
    assert mine[-1]["inputTokens"] == 120 and mine[-1]["outputTokens"] == 7
    assert mine[-1]["contextTokens"] > 0 and mine[-1]["level"] == "normal"
    assert set(mine[-1]) >= {"contextThreshold", "contextPercent", "provider", "model", "costUsd", "queued"}


async def test_system_prompt_has_workspace_facts_and_tool_rules(harness):
    harness.fake.script(Reply(text="x"))
    await harness.chat("hi")
    instructions = harness.fake.requests[0].body["instructions"]
    assert str(harness.root) in instructions and "Platform:" in instructions
    assert "# Tools" in instructions and "Verify your work" in instructions
    # The date changes: it comes as context, before the prompt, not in the instructions.
    context, prompt = harness.fake.requests[0].body["input"]
    assert prompt["content"][0]["text"] == "hi" and "Date:" in context["content"][0]["text"]
    tools = [t["name"] for t in harness.fake.requests[0].body["tools"]]
    # The default model (gpt-5) is of the family trained on apply_patch (agent/model_family.py).
    assert tools[:6] == ["read_file", "list_files", "grep", "apply_patch", "write_file", "run_command"]
    json.dumps(harness.fake.requests[0].body)  # the body is plain JSON


async def test_attachments_go_to_the_model_not_the_title(harness):
    harness.fake.script(Reply(text="It prints hello."))
    result = await harness.chat("what does this do?", attachments=["hello.py"])
    assert result["status"] == "completed"
    [context, user] = [i for i in harness.fake.requests[0].body["input"] if i.get("role") == "user"]
    assert context["content"][0]["text"].startswith("<environment_context>")
    typed, attached = [p["text"] for p in user["content"]]
    assert typed == "what does this do?" and "print('hello')" in attached
    assert (await harness.command("shiro.history"))["prompts"] == ["what does this do?"]
    await harness.command("shiro.save")
    [row] = (await harness.command("shiro.sessions"))["sessions"]
    assert row["title"] == "what does this do?"
    with pytest.raises(JsonRpcException) as caught:
        await harness.chat("and this?", attachments=["../outside.txt"])
    assert caught.value.code == -32803 and "outside the workspace" in caught.value.message


async def test_unknown_agent_is_a_notice(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace, agent="wizard") as h:
        fake.script(Reply(text="hi"))
        result = await h.chat("hello")
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert notices and "unknown agent 'wizard'" in notices[0]
