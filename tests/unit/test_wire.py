"""The two wire formats: request bodies from transcripts, provider events from stream events.

Bodies and parsers are tested on plain data; the last tests drive the fake provider over HTTP
(errors as `OpenAIProvider` translates them, and the low-level post against `responses.create`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from shiro_neko.agent.provider import wire_chat, wire_responses
from shiro_neko.agent.provider.base import (
    Completed,
    OutputStarted,
    ProviderError,
    ProviderRequest,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolSpec,
    Usage,
)
from shiro_neko.agent.provider.openai_provider import EndpointConfig, OpenAIProvider
from shiro_neko.model.transcript import (
    AssistantMessage,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)

from tests.sdk_types import check_responses
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.builders import user

TOOL = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def request(*messages: Any, tools: list[ToolSpec] | None = None, inserts: list[tuple[int, str]] | None = None) -> ProviderRequest:
    return ProviderRequest("m", "be brief", list(messages), tools or [], inserts or [])


def stored_turn() -> list[Any]:
    """A stored response (reasoning, two text parts of one message, a call) and its tool result."""
    return [
        user("fix it"),
        AssistantMessage(content=[
            ReasoningPart(text="think", item_id="rs_1", encrypted_content="ENC"),
            TextPart(text="Let me ", item_id="msg_1"),
            TextPart(text="look.", item_id="msg_1"),
            ToolCallPart(tool_call_id="call_1", tool_name="read_file", input={"path": "a.py"}, item_id="fc_1"),
        ]),
        ToolMessage(content=[ToolResultPart(tool_call_id="call_1", tool_name="read_file", output="print(1)\n")]),
    ]


def keys_anywhere(obj: Any, key: str) -> bool:
    if isinstance(obj, dict):
        return key in obj or any(keys_anywhere(v, key) for v in obj.values())
    if isinstance(obj, list):
        return any(keys_anywhere(v, key) for v in obj)
    return False


# ------------------------------------------------------------------ Responses request bodies
def test_responses_body_fields_and_tools() -> None:
    body = wire_responses.request_body(request(user("hi"), tools=[TOOL]), store=True)
    assert body["model"] == "m" and body["instructions"] == "be brief"
    assert body["stream"] is True and body["store"] is True
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["tools"] == [{"type": "function", "name": "read_file", "description": "Read a file",
                              "parameters": TOOL.parameters, "strict": False}]
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert "tools" not in wire_responses.request_body(request(user("hi")), store=False)
    assert wire_responses.request_body(request(user("hi")), store=False)["store"] is False


def test_store_on_sends_item_references_once_per_id() -> None:
    items = wire_responses.request_body(request(*stored_turn()), store=True)["input"]
    assert items[1:] == [
        {"type": "item_reference", "id": "rs_1"},
        {"type": "item_reference", "id": "msg_1"},  # two parts, one stored message: one reference
        {"type": "item_reference", "id": "fc_1"},
        {"type": "function_call_output", "call_id": "call_1", "output": "print(1)\n"},
    ]


def test_store_off_sends_everything_inline_without_ids() -> None:
    items = wire_responses.request_body(request(*stored_turn()), store=False)["input"]
    assert not any(i.get("type") == "item_reference" for i in items)
    assert not keys_anywhere(items, "id")
    # Reasoning cannot go inline (the API requires its id, a pointer into storage): left out.
    assert not any(i.get("type") == "reasoning" for i in items)
    assert items[1] == {"role": "assistant", "content": "Let me "}
    assert items[2] == {"role": "assistant", "content": "look."}
    assert items[3] == {"type": "function_call", "call_id": "call_1", "name": "read_file",
                        "arguments": '{"path": "a.py"}'}
    assert items[4] == {"type": "function_call_output", "call_id": "call_1", "output": "print(1)\n"}
    check_responses(wire_responses.request_body(request(*stored_turn(), tools=[TOOL]), store=False))


def test_parts_without_ids_go_inline_even_with_store_on() -> None:
    msg = AssistantMessage(content=[TextPart(text="partial answer"), TextPart(text="")])
    items = wire_responses.request_body(request(user("q"), msg), store=True)["input"]
    assert items[1:] == [{"role": "assistant", "content": "partial answer"}]


def test_reasoning_is_never_sent_inline() -> None:
    """An inline reasoning item without its id is the real API's 400 `Missing required parameter:
    'input[1].id'` (a long turn on a reasoning model died of it)."""
    msg = AssistantMessage(content=[
        ReasoningPart(text="summary only"),
        ReasoningPart(text="", encrypted_content="E2"),
        TextPart(text="done"),
    ])
    items = wire_responses.request_body(request(user("q"), msg), store=False)["input"]
    assert items[1:] == [{"role": "assistant", "content": "done"}]
    check_responses(wire_responses.request_body(request(user("q"), msg), store=False))


def test_function_call_arguments_are_json_text() -> None:
    msg = AssistantMessage(content=[
        ToolCallPart(tool_call_id="c1", tool_name="write_file", input={"path": "é.txt", "n": [1, 2], "ok": True}),
        ToolCallPart(tool_call_id="c2", tool_name="grep", input='{"pattern": "x"'),  # broken JSON kept as sent
    ])
    results = ToolMessage(content=[
        ToolResultPart(tool_call_id="c1", tool_name="write_file", output="wrote"),
        ToolResultPart(tool_call_id="c2", tool_name="grep", output="bad arguments", is_error=True),
    ])
    items = wire_responses.request_body(request(user("q"), msg, results), store=False)["input"]
    assert json.loads(items[1]["arguments"]) == {"path": "é.txt", "n": [1, 2], "ok": True}
    assert "é" in items[1]["arguments"]
    assert items[2]["arguments"] == '{"pattern": "x"'
    assert items[3:] == [
        {"type": "function_call_output", "call_id": "c1", "output": "wrote"},
        {"type": "function_call_output", "call_id": "c2", "output": "bad arguments"},
    ]


def test_inserts_become_developer_messages_in_place() -> None:
    req = request(user("one"), AssistantMessage(content=[TextPart(text="ok")]), user("two"),
                  inserts=[(0, "memory"), (2, "note A"), (2, "note B"), (3, "at the end")])
    items = wire_responses.request_body(req, store=False)["input"]
    shape = [i["content"] if i["role"] == "developer" else i["role"] for i in items]
    assert shape == ["memory", "user", "assistant", "note A", "note B", "user", "at the end"]


# ------------------------------------------------------------------------ Chat request bodies
def test_chat_body_orders_system_calls_and_tool_messages() -> None:
    reasoning_only = AssistantMessage(content=[ReasoningPart(text="hmm", item_id="rs_9", encrypted_content="E")])
    req = request(
        UserMessage(content=[TextPart(text="a"), TextPart(text="b")]),
        reasoning_only,
        AssistantMessage(content=[
            ReasoningPart(text="plan"),
            TextPart(text="Reading.", item_id="msg_1"),
            ToolCallPart(tool_call_id="c1", tool_name="read_file", input={"path": "x"}),
            ToolCallPart(tool_call_id="c2", tool_name="read_file", input='{"path": "y"}'),
        ]),
        ToolMessage(content=[ToolResultPart("c1", "read_file", "X"), ToolResultPart("c2", "read_file", "Y")]),
        AssistantMessage(content=[ToolCallPart(tool_call_id="c3", tool_name="read_file", input={})]),
        ToolMessage(content=[ToolResultPart("c3", "read_file", "Z")]),
        tools=[TOOL], inserts=[(1, "memo")],
    )
    body = wire_chat.request_body(req)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                                               "parameters": TOOL.parameters}}]
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "a\n\nb"},
        {"role": "system", "content": "memo"},
        # the reasoning-only message is skipped
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "x"}'}},
            {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "y"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "X"},
        {"role": "tool", "tool_call_id": "c2", "content": "Y"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c3", "content": "Z"},
    ]
    assert "tools" not in wire_chat.request_body(request(user("hi")))


# --------------------------------------------------------------------- Responses parse_stream
async def feed(events: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for event in events:
        yield event


async def responses_events(events: list[dict[str, Any]], store: bool = True) -> list[Any]:
    return [e async for e in wire_responses.parse_stream(feed(events), store)]


async def chat_events(chunks: list[dict[str, Any]]) -> list[Any]:
    return [e async for e in wire_chat.parse_stream(feed(chunks))]


MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}
REASONING = {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"},
                                                            {"type": "summary_text", "text": "Act"}],
             "encrypted_content": "ENC"}


def fcall(n: int, arguments: str) -> dict[str, Any]:
    return {"id": f"fc_{n}", "type": "function_call", "status": "completed", "call_id": f"call_{n}",
            "name": "read_file", "arguments": arguments}


def completed(output: list[dict[str, Any]], usage: dict[str, Any] | None = None, kind: str = "response.completed") -> dict[str, Any]:
    return {"type": kind, "response": {"id": "resp_1", "status": "completed", "output": output, "usage": usage}}


async def test_responses_text_stream() -> None:
    events = await responses_events([
        {"type": "response.created", "response": {"id": "resp_1", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**MESSAGE, "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "lo"},
        {"type": "response.output_text.done", "output_index": 0, "text": "Hello"},
        {"type": "response.output_item.done", "output_index": 0, "item": MESSAGE},
        completed([MESSAGE], {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}),
    ])
    assert events == [
        OutputStarted(), TextDelta("Hel"), TextDelta("lo"),
        Completed(AssistantMessage(content=[TextPart(text="Hello", item_id="msg_1")]), Usage(12, 3)),
    ]


async def test_responses_store_off_keeps_no_item_ids() -> None:
    events = await responses_events([completed([REASONING, MESSAGE, fcall(1, "{}")])], store=False)
    (done,) = events
    assert all(p.item_id is None for p in done.message.content)
    assert done.message.content[0].encrypted_content == "ENC"


async def test_responses_reasoning_and_several_calls() -> None:
    calls = [fcall(1, '{"path": "a.py"}'), fcall(2, '{"path": "b.py"}'), fcall(3, "not json")]
    events = await responses_events([
        {"type": "response.output_item.added", "output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Pl"},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "an"},
        {"type": "response.reasoning_text.delta", "output_index": 0, "delta": "raw"},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        *[ev for i, c in enumerate(calls, start=1) for ev in (
            {"type": "response.output_item.added", "output_index": i, "item": {**c, "arguments": ""}},
            {"type": "response.function_call_arguments.delta", "output_index": i, "delta": c["arguments"]},
            {"type": "response.output_item.done", "output_index": i, "item": c},
        )],
        completed([REASONING, *calls], {"input_tokens": 5, "output_tokens": 7}),
    ])
    assert events[:4] == [OutputStarted(), ReasoningDelta("Pl"), ReasoningDelta("an"), ReasoningDelta("raw")]
    assert events.count(OutputStarted()) == 1
    done = events[-1]
    assert isinstance(done, Completed) and done.usage == Usage(5, 7)
    assert done.message.content == [
        ReasoningPart(text="Plan\n\nAct", item_id="rs_1", encrypted_content="ENC"),
        ToolCallPart(tool_call_id="call_1", tool_name="read_file", input={"path": "a.py"}, item_id="fc_1"),
        ToolCallPart(tool_call_id="call_2", tool_name="read_file", input={"path": "b.py"}, item_id="fc_2"),
        ToolCallPart(tool_call_id="call_3", tool_name="read_file", input="not json", item_id="fc_3"),
    ]


async def test_responses_completed_without_output_uses_done_items_in_order() -> None:
    events = await responses_events([
        {"type": "response.output_item.done", "output_index": 1, "item": fcall(1, "{}")},
        {"type": "response.output_item.done", "output_index": 0, "item": MESSAGE},
        completed([], None, kind="response.incomplete"),
    ])
    (done,) = events
    assert [type(p) for p in done.message.content] == [TextPart, ToolCallPart]
    assert done.usage == Usage(0, 0)


async def test_responses_failed_raises_provider_error() -> None:
    failed = {"type": "response.failed", "response": {"id": "r", "status": "failed",
                                                      "error": {"code": "server_error", "message": "boom"}}}
    with pytest.raises(ProviderError) as info:
        await responses_events([{"type": "response.created", "response": {}}, failed])
    assert info.value.message == "boom" and info.value.code == "server_error" and info.value.retryable


async def test_responses_error_event_raises_provider_error() -> None:
    with pytest.raises(ProviderError) as info:
        await responses_events([{"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}])
    assert info.value.message == "slow down" and info.value.retryable
    with pytest.raises(ProviderError) as info:
        await responses_events([{"type": "error", "code": "context_length_exceeded", "message": "too long"}])
    assert info.value.message == "too long" and not info.value.retryable


async def test_responses_stream_ending_early_raises() -> None:
    with pytest.raises(ProviderError) as info:
        await responses_events([
            {"type": "response.output_item.added", "output_index": 0, "item": {**MESSAGE, "content": []}},
            {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"},
        ])
    assert info.value.retryable and "ended" in info.value.message


REFUSAL_MESSAGE = {"id": "msg_2", "type": "message", "role": "assistant", "status": "completed",
                   "content": [{"type": "refusal", "refusal": "I can't help with that."}]}


async def test_responses_refusal_streams_and_marks_its_part() -> None:
    events = await responses_events([
        {"type": "response.output_item.added", "output_index": 0, "item": {**REFUSAL_MESSAGE, "content": []}},
        {"type": "response.content_part.added", "item_id": "msg_2", "output_index": 0, "content_index": 0,
         "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", "item_id": "msg_2", "output_index": 0, "content_index": 0, "delta": "I can't "},
        {"type": "response.refusal.delta", "item_id": "msg_2", "output_index": 0, "content_index": 0, "delta": "help with that."},
        {"type": "response.refusal.done", "item_id": "msg_2", "output_index": 0, "content_index": 0,
         "refusal": "I can't help with that."},
        {"type": "response.output_item.done", "output_index": 0, "item": REFUSAL_MESSAGE},
        completed([REFUSAL_MESSAGE]),
    ])
    assert events == [
        OutputStarted(), RefusalDelta("I can't "), RefusalDelta("help with that."),
        Completed(AssistantMessage(content=[TextPart(text="I can't help with that.", item_id="msg_2", refusal=True)]), Usage()),
    ]


async def test_responses_refusal_sent_whole_is_still_shown_and_text_stays_apart() -> None:
    both = {**REFUSAL_MESSAGE, "content": [{"type": "output_text", "text": "Well. "}, *REFUSAL_MESSAGE["content"]]}
    events = await responses_events([
        {"type": "response.refusal.done", "item_id": "msg_2", "output_index": 0, "content_index": 1, "refusal": "No."},
        completed([both]),
    ])
    assert events[0] == RefusalDelta("No.")
    assert events[-1].message.content == [TextPart(text="Well. ", item_id="msg_2"),
                                          TextPart(text="I can't help with that.", item_id="msg_2", refusal=True)]


def test_a_refusal_goes_back_as_a_refusal_or_as_plain_chat_content() -> None:
    said = AssistantMessage(content=[TextPart(text="No.", refusal=True)])
    body = wire_responses.request_body(request(user("hi"), said, user("why")), store=True)
    assert body["input"][1] == {"role": "assistant", "content": "No."}
    check_responses(body)
    chat = wire_chat.request_body(request(user("hi"), said, user("why")))
    assert chat["messages"][2] == {"role": "assistant", "content": "No."}


# -------------------------------------------------------------------------- Chat parse_stream
def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": choices, "usage": usage}


async def test_chat_stream_text_reasoning_and_split_tool_calls() -> None:
    events = await chat_events([
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "think "}),
        chunk({"reasoning_content": "more"}),
        chunk({"content": "Look"}),
        chunk({"content": "ing"}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "grep", "arguments": '{"pat'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a.py"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'tern": "x"}'}}]}),
        chunk({}, finish="tool_calls"),
        chunk(None, usage={"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}),
    ])
    assert events[:5] == [OutputStarted(), ReasoningDelta("think "), ReasoningDelta("more"), TextDelta("Look"), TextDelta("ing")]
    assert events.count(OutputStarted()) == 1
    done = events[-1]
    assert isinstance(done, Completed) and done.usage == Usage(40, 9)
    assert done.message.content == [
        ReasoningPart(text="think more"),
        TextPart(text="Looking"),
        ToolCallPart(tool_call_id="call_a", tool_name="read_file", input={"path": "a.py"}),
        ToolCallPart(tool_call_id="call_b", tool_name="grep", input={"pattern": "x"}),
    ]


async def test_chat_refusal_streams_and_marks_its_part() -> None:
    events = await chat_events([
        chunk({"role": "assistant", "content": None, "refusal": ""}),
        chunk({"refusal": "I can't "}),
        chunk({"refusal": "do that."}),
        chunk({}, finish="stop"),
    ])
    assert events[:3] == [OutputStarted(), RefusalDelta("I can't "), RefusalDelta("do that.")]
    assert events[-1].message.content == [TextPart(text="I can't do that.", refusal=True)]


async def test_chat_stream_without_finish_reason_raises() -> None:
    with pytest.raises(ProviderError) as info:
        await chat_events([chunk({"content": "half"})])
    assert info.value.retryable


# ---------------------------------------------------------------- against the fake provider
@pytest.fixture
def provider(fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> OpenAIProvider:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return OpenAIProvider(EndpointConfig(model="m", base_url=fake.base_url, wire_api="responses", store=True))


def test_names_tools_on_plain_errors() -> None:
    assert ProviderError("400: tools is not supported with this model", status=400, param="tools").names_tools
    assert ProviderError("400: this model does not support tools", status=400).names_tools
    assert not ProviderError("400: No tool output found for function call call_1.", status=400, param="input").names_tools
    assert not ProviderError("500: tools is not supported with this model", status=500).names_tools


async def test_names_tools_on_the_fake_providers_errors(fake: FakeProvider, provider: OpenAIProvider) -> None:
    fake.supports_tools = False
    with pytest.raises(ProviderError) as info:
        await provider._open(wire_responses.request_body(request(user("hi"), tools=[TOOL]), store=True))
    assert info.value.status == 400 and info.value.param == "tools"
    assert "tools is not supported with this model" in info.value.message
    assert info.value.names_tools and not info.value.retryable

    orphan = request(user("hi"), AssistantMessage(content=[ToolCallPart(tool_call_id="call_1", tool_name="read_file", input={})]))
    with pytest.raises(ProviderError) as info:
        await provider._open(wire_responses.request_body(orphan, store=True))
    assert info.value.status == 400 and info.value.message == "400: No tool output found for function call call_1."
    assert not info.value.names_tools


async def test_two_turns_with_item_references_pass_the_fakes_checks(fake: FakeProvider, provider: OpenAIProvider) -> None:
    fake.script(Reply(text="Reading", reasoning="plan", encrypted="ENC", calls=[Call("read_file", {"path": "a"}, "call_1")]),
                Reply(text="done"))
    messages: list[Any] = [user("go")]
    events = [e async for e in provider.stream(request(*messages, tools=[TOOL]))]
    first = events[-1]
    assert isinstance(first, Completed)
    assert [p.item_id[:3] for p in first.message.content] == ["rs_", "msg", "fc_"]
    messages += [first.message, ToolMessage(content=[ToolResultPart("call_1", "read_file", "A")])]
    events = [e async for e in provider.stream(request(*messages, tools=[TOOL]))]
    assert isinstance(events[-1], Completed) and events[-1].message.content[0].text == "done"
    assert not fake.rejections
    sent = fake.requests[1].body["input"]
    assert [i.get("type") for i in sent[1:]] == ["item_reference"] * 3 + ["function_call_output"]


async def test_low_level_post_and_sdk_create_yield_the_same_event_types(fake: FakeProvider, provider: OpenAIProvider) -> None:
    from openai import AsyncOpenAI

    reply = Reply(text="Hello there", reasoning="Thinking", encrypted="ENC", chunks=2,
                  calls=[Call("read_file", {"path": "a.py"}, "call_a"), Call("read_file", {"path": "b.py"}, "call_b")])
    fake.script(reply, reply)
    body = wire_responses.request_body(request(user("hi"), tools=[TOOL]), store=True)

    client = AsyncOpenAI(api_key="sk-test", base_url=fake.base_url, max_retries=0, timeout=10)
    try:
        sdk_stream = await client.responses.create(model=body["model"], input=body["input"], instructions=body["instructions"],
                                                   tools=body["tools"], store=True, include=body["include"], stream=True)
        sdk_events = [e async for e in sdk_stream]
    finally:
        await client.close()
    ours_stream = await provider._open(body)
    try:
        our_events = [e async for e in ours_stream]
    finally:
        await ours_stream.close()

    assert all(isinstance(e, dict) for e in our_events)
    assert [e["type"] for e in our_events] == [e.type for e in sdk_events]
    assert our_events[-1]["type"] == "response.completed"

    # Parsing either stream gives the same provider events, item ids aside, and the cached
    # tokens (the second of two equal requests is served from the fake's prompt cache).
    def strip(events: list[Any]) -> list[Any]:
        for e in events:
            if isinstance(e, Completed):
                for p in e.message.content:
                    p.item_id = None
                e.usage.cached_tokens = 0
        return events

    from_sdk = strip(await responses_events([e.to_dict() for e in sdk_events]))
    from_ours = strip(await responses_events(our_events))
    assert from_sdk == from_ours
    assert isinstance(from_ours[-1], Completed) and [type(p) for p in from_ours[-1].message.content] == [
        ReasoningPart, TextPart, ToolCallPart, ToolCallPart]


def test_names_model_on_the_endpoints_words_for_a_missing_model() -> None:
    assert ProviderError("404: The model `gpt-5` does not exist or you do not have access to it.", status=404,
                         code="model_not_found").names_model
    assert ProviderError('404: model "gpt-5" not found, try pulling it first', status=404).names_model  # Ollama
    assert ProviderError("400: Invalid model name passed in model=gpt-5", status=400).names_model  # LiteLLM
    # A missing route is not a missing model: the Responses API fallback still reads it.
    assert not ProviderError("404: 404 page not found", status=404).names_model
    assert not ProviderError("404: Item with id 'rs_1' not found.", status=404, missing_item="rs_1").names_model
    assert not ProviderError("500: model crashed; not found a way", status=500).names_model
