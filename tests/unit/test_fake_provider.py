"""The fake provider, driven by the real openai SDK over real HTTP."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI, AsyncStream
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseStreamEvent,
)
from pydantic import TypeAdapter

from tests.fake_provider import NO_STEP_LEFT, Call, FakeProvider, HttpError, RecordedRequest, Reply

EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
TOOL = {"type": "function", "name": "read_file", "description": "Read a file", "strict": False,
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
CHAT_TOOL = {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                              "parameters": {"type": "object", "properties": {}}}}


@pytest.fixture
async def client(fake: FakeProvider) -> AsyncIterator[AsyncOpenAI]:
    c = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0, timeout=5)
    yield c
    await c.close()


async def collect(stream: AsyncStream[Any]) -> list[Any]:
    return [event async for event in stream]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


async def stored_turn(fake: FakeProvider, client: AsyncOpenAI, reply: Reply) -> Response:
    """Run one streamed Responses turn (store on) and return the completed response."""
    fake.script(reply)
    events = await collect(await client.responses.create(model="m", input=[user("hi")], stream=True))
    done = events[-1]
    assert isinstance(done, ResponseCompletedEvent)
    return done.response


# --------------------------------------------------------------------- streams
async def test_responses_stream_parses_into_typed_events(fake: FakeProvider, client: AsyncOpenAI) -> None:
    calls = [Call("read_file", {"path": "a.py"}), Call("read_file", '{"path": "b.py"}', call_id="call_b")]
    fake.script(Reply(text="Hello there", reasoning="Thinking it over", encrypted="ENC", calls=calls, chunks=2))
    stream = await client.responses.create(model="m", input=[user("hi")], instructions="be nice", tools=[TOOL],
                                           stream=True, include=["reasoning.encrypted_content"])
    events = await collect(stream)

    for e in events:  # strict validation, not just the SDK's lenient construct
        EVENT_ADAPTER.validate_python(e.to_dict())
    assert [e.sequence_number for e in events] == list(range(len(events)))
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    assert types[2:12] == [
        "response.output_item.added", "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done", "response.reasoning_summary_part.done",
        "response.output_item.done", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta",
    ]
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello there"
    assert "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta") == "Thinking it over"
    arg_deltas = [e for e in events if e.type == "response.function_call_arguments.delta"]
    assert {e.output_index for e in arg_deltas} == {2, 3}

    resp = events[-1].response
    Response.model_validate(resp.to_dict())
    assert resp.id.startswith("resp_") and resp.status == "completed" and resp.instructions == "be nice"
    assert [o.type for o in resp.output] == ["reasoning", "message", "function_call", "function_call"]
    rs, msg, fc1, fc2 = resp.output
    assert rs.id.startswith("rs_") and rs.encrypted_content == "ENC" and rs.summary[0].text == "Thinking it over"
    assert msg.id.startswith("msg_") and resp.output_text == "Hello there"
    assert fc1.id.startswith("fc_") and fc1.call_id == calls[0].call_id and fc1.arguments == '{"path": "a.py"}'
    assert fc2.call_id == "call_b" and fc2.name == "read_file"
    assert resp.usage is not None and resp.usage.output_tokens_details.reasoning_tokens > 0
    assert resp.usage.total_tokens == resp.usage.input_tokens + resp.usage.output_tokens
    assert set(fake.stored) == {rs.id, msg.id, fc1.id, fc2.id}
    assert fake.stored[msg.id]["response_id"] == resp.id

    req = fake.requests[0]
    assert req.api == "responses" and req.path == "/v1/responses"
    assert req.headers["authorization"] == "Bearer sk-test" and req.body["tools"] == [TOOL]


async def test_low_level_post_stream(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="abc", reasoning="r", calls=[Call("f", {}), Call("g", {"x": 1})], usage=(7, 5)))
    stream = await client.post("/responses", cast_to=object, stream=True,
                               stream_cls=AsyncStream[ResponseStreamEvent],
                               body={"model": "m", "input": [user("hi")], "stream": True, "store": False})
    events = await collect(stream)
    assert isinstance(events[-1], ResponseCompletedEvent)
    usage = events[-1].response.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (7, 5, 12)
    assert events[-1].response.output[0].encrypted_content is None  # include not asked
    assert fake.stored == {}  # store: false


async def test_responses_non_stream(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="plain", calls=[Call("f", {"a": 1})]))
    resp = await client.responses.create(model="m", input="hi")
    Response.model_validate(resp.to_dict())
    assert resp.output_text == "plain" and resp.output[1].type == "function_call"


async def test_chat_stream_with_reasoning_and_tool_calls(fake: FakeProvider, client: AsyncOpenAI) -> None:
    calls = [Call("read_file", {"path": "a"}), Call("grep", {"q": "x"})]
    fake.script(Reply(text="ok", reasoning="hmm", calls=calls, usage=(10, 4)))
    stream = await client.chat.completions.create(model="m", messages=[user("hi")], tools=[CHAT_TOOL],
                                                  stream=True, stream_options={"include_usage": True})
    chunks = await collect(stream)
    assert all(c.object == "chat.completion.chunk" and c.id.startswith("chatcmpl-") for c in chunks)
    with_choices = [c for c in chunks if c.choices]
    assert with_choices[0].choices[0].delta.role == "assistant"
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in with_choices)
    text = "".join(c.choices[0].delta.content or "" for c in with_choices)
    assert (reasoning, text) == ("hmm", "ok")
    assembled: dict[int, dict[str, str]] = {}
    for c in with_choices:
        for tc in c.choices[0].delta.tool_calls or []:
            slot = assembled.setdefault(tc.index, {"id": "", "name": "", "args": ""})
            slot["id"] += tc.id or ""
            slot["name"] += (tc.function.name or "") if tc.function else ""
            slot["args"] += (tc.function.arguments or "") if tc.function else ""
    assert assembled == {0: {"id": calls[0].call_id, "name": "read_file", "args": '{"path": "a"}'},
                         1: {"id": calls[1].call_id, "name": "grep", "args": '{"q": "x"}'}}
    assert with_choices[-1].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 14
    assert fake.requests[0].api == "chat"


async def test_chat_non_stream(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="hello", reasoning="r"))
    done = await client.chat.completions.create(model="m", messages=[user("hi")])
    assert done.choices[0].message.content == "hello" and done.choices[0].finish_reason == "stop"
    assert (done.choices[0].message.model_extra or {})["reasoning_content"] == "r"


async def test_responses_refusal_streams_as_the_api_does(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(refusal="I can't help with that.", chunks=3))
    events = await collect(await client.responses.create(model="m", input=[user("hi")], stream=True))
    for e in events:  # the SDK's strict types accept every refusal event
        EVENT_ADAPTER.validate_python(e.to_dict())
    types = [e.type for e in events]
    assert types[2:5] == ["response.output_item.added", "response.content_part.added", "response.refusal.delta"]
    assert events[3].part.type == "refusal"
    assert "".join(e.delta for e in events if e.type == "response.refusal.delta") == "I can't help with that."
    assert types.count("response.refusal.delta") == 3 and "response.output_text.delta" not in types
    (done,) = [e for e in events if e.type == "response.refusal.done"]
    assert done.refusal == "I can't help with that."
    resp = events[-1].response
    Response.model_validate(resp.to_dict())
    (part,) = resp.output[0].content
    assert part.type == "refusal" and part.refusal == "I can't help with that." and resp.output_text == ""


async def test_responses_text_then_refusal_are_two_content_parts(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="Well.", refusal="No."))
    resp = await client.responses.create(model="m", input="hi")
    Response.model_validate(resp.to_dict())
    assert [c.type for c in resp.output[0].content] == ["output_text", "refusal"]


async def test_chat_refusal_streams_and_answers_as_the_api_does(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(refusal="I can't help with that."), Reply(refusal="Nope."))
    chunks = await collect(await client.chat.completions.create(model="m", messages=[user("hi")], stream=True))
    with_choices = [c for c in chunks if c.choices]
    first = with_choices[0].choices[0].delta
    assert first.role == "assistant" and first.content is None and first.refusal == ""
    assert "".join(c.choices[0].delta.refusal or "" for c in with_choices) == "I can't help with that."
    assert all(not c.choices[0].delta.content for c in with_choices)
    assert with_choices[-1].choices[0].finish_reason == "stop"
    done = await client.chat.completions.create(model="m", messages=[user("hi")])
    assert done.choices[0].message.refusal == "Nope." and done.choices[0].message.content is None


# ------------------------------------------------------------ Responses checks
async def test_item_reference_accepted_then_404_after_forget(fake: FakeProvider, client: AsyncOpenAI) -> None:
    resp = await stored_turn(fake, client, Reply(text="t", reasoning="r", calls=[Call("f", {}, call_id="call_1")]))
    rs, msg, fc = (o.id for o in resp.output)
    history = [user("hi"), {"type": "item_reference", "id": rs}, {"type": "item_reference", "id": msg},
               {"type": "item_reference", "id": fc},
               {"type": "function_call_output", "call_id": "call_1", "output": "done"}]
    fake.script(Reply(text="second"))
    second = await client.responses.create(model="m", input=history)
    assert second.output_text == "second"

    fake.forget_items()
    with pytest.raises(openai.NotFoundError) as err:
        await client.responses.create(model="m", input=history)
    assert err.value.status_code == 404
    assert err.value.body == {"message": f"Item with id '{rs}' not found.", "type": "invalid_request_error",
                              "param": "input", "code": None}
    assert len(fake.rejections) == 1 and fake.rejections[0].error is not None
    assert fake.pending == 0


async def test_inline_items_with_ids(fake: FakeProvider, client: AsyncOpenAI) -> None:
    resp = await stored_turn(fake, client, Reply(text="t", reasoning="r", encrypted="E"))
    rs_item, msg_item = (o.to_dict() for o in resp.output)
    fake.script(Reply(text="ok"), Reply(text="ok"))
    await client.responses.create(model="m", input=[user("a"), rs_item, msg_item, user("b")])  # stored ids inline
    # inline without ids: no dependencies (a reasoning item cannot go without its id at all)
    await client.responses.create(model="m", input=[
        user("a"), {"role": "assistant", "content": "t"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "b"}]}])
    with pytest.raises(openai.NotFoundError, match="Item with id 'msg_nope' not found."):
        await client.responses.create(model="m", input=[{**msg_item, "id": "msg_nope"}])
    assert fake.pending == 0


async def test_missing_reasoning_item(fake: FakeProvider, client: AsyncOpenAI) -> None:
    resp = await stored_turn(fake, client, Reply(text="t", reasoning="r", calls=[Call("f", {}, call_id="call_9")]))
    rs, msg, fc = (o.id for o in resp.output)
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[user("hi"), {"type": "item_reference", "id": msg}])
    assert err.value.body["message"] == (  # type: ignore[index]
        f"Item '{msg}' of type 'message' was provided without its required 'reasoning' item: '{rs}'.")
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[
            user("hi"), {"type": "item_reference", "id": fc},
            {"type": "function_call_output", "call_id": "call_9", "output": "x"}])
    assert err.value.message.endswith(
        f"Item '{fc}' of type 'function_call' was provided without its required 'reasoning' item: '{rs}'.")
    assert len(fake.rejections) == 2


async def test_function_call_output_pairing(fake: FakeProvider, client: AsyncOpenAI) -> None:
    call = {"type": "function_call", "call_id": "call_a", "name": "f", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "call_a", "output": "r"}
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[user("hi"), out, call])
    assert err.value.body["message"] == (  # type: ignore[index]
        "No tool call found for function call output with call_id call_a.")
    assert err.value.body["param"] == "input"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[user("hi"), call])
    assert err.value.body["message"] == "No tool output found for function call call_a."  # type: ignore[index]
    fake.script(Reply(text="fine"))
    assert (await client.responses.create(model="m", input=[user("hi"), call, out])).output_text == "fine"


async def test_store_false_items_are_not_found(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="t"))
    resp = await client.responses.create(model="m", input="hi", store=False)
    with pytest.raises(openai.NotFoundError) as err:
        await client.responses.create(model="m", input=[{"type": "item_reference", "id": resp.output[0].id}])
    assert err.value.body["message"].startswith(  # type: ignore[index]
        f"Item with id '{resp.output[0].id}' not found. Items are not persisted when `store` is set to false.")


async def test_strict_reasoning_followup(fake: FakeProvider, client: AsyncOpenAI) -> None:
    resp = await stored_turn(fake, client, Reply(text="t", reasoning="r"))
    rs = resp.output[0].id
    history = [user("a"), {"type": "item_reference", "id": rs}, user("b")]
    fake.script(Reply(text="lenient"))
    await client.responses.create(model="m", input=history)
    fake.strict_reasoning_followup = True
    with pytest.raises(openai.BadRequestError,
                       match=f"Item '{rs}' of type 'reasoning' was provided without its required following item."):
        await client.responses.create(model="m", input=history)


# ----------------------------------------------------------------- Chat checks
async def test_chat_tool_message_validation(fake: FakeProvider, client: AsyncOpenAI) -> None:
    tc = {"id": "call_x", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    with pytest.raises(openai.BadRequestError) as err:
        await client.chat.completions.create(model="m", messages=[
            user("hi"), {"role": "tool", "tool_call_id": "call_x", "content": "r"}])
    assert err.value.body == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message"
                   " with 'tool_calls'.",
        "type": "invalid_request_error", "param": "messages.[1].role", "code": None}
    with pytest.raises(openai.BadRequestError) as err:
        await client.chat.completions.create(model="m", messages=[
            user("hi"), {"role": "assistant", "content": None, "tool_calls": [tc, {**tc, "id": "call_y"}]},
            {"role": "tool", "tool_call_id": "call_x", "content": "r"}, user("again")])
    assert err.value.body["message"] == (  # type: ignore[index]
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each"
        " 'tool_call_id'. The following tool_call_ids did not have response messages: call_y")
    assert err.value.body["param"] == "messages.[1].role"  # type: ignore[index]
    fake.script(Reply(text="fine"))
    ok = await client.chat.completions.create(model="m", messages=[
        user("hi"), {"role": "assistant", "content": None, "tool_calls": [tc]},
        {"role": "tool", "tool_call_id": "call_x", "content": "r"}])
    assert ok.choices[0].message.content == "fine"


# --------------------------------------------------------- errors and faults
async def test_http_errors_and_empty_script(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(HttpError(429, "Rate limit reached", type="rate_limit_error", code="rate_limit_exceeded",
                          retry_after=1.5),
                HttpError(502, body_text="<html>bad gateway</html>"))
    with pytest.raises(openai.RateLimitError) as err:
        await client.responses.create(model="m", input="hi", stream=True)
    assert err.value.response.headers["retry-after"] == "1.5"
    assert err.value.code == "rate_limit_exceeded" and err.value.type == "rate_limit_error"
    assert err.value.body["message"] == "Rate limit reached"  # type: ignore[index]
    with pytest.raises(openai.InternalServerError) as err2:
        await client.chat.completions.create(model="m", messages=[user("hi")])
    assert err2.value.status_code == 502 and err2.value.response.text == "<html>bad gateway</html>"
    with pytest.raises(openai.InternalServerError, match=NO_STEP_LEFT):
        await client.responses.create(model="m", input="hi")


async def test_callable_step_sees_request(fake: FakeProvider, client: AsyncOpenAI) -> None:
    def step(req: RecordedRequest) -> Reply:
        return Reply(text=f"{req.api}:{req.body['model']}")

    fake.script(step)
    assert (await client.responses.create(model="mini", input="hi")).output_text == "responses:mini"


async def test_break_after_raises_connection_error(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="a long answer", break_after=3), Reply(text="chat", break_after=2))
    seen: list[Any] = []
    with pytest.raises(openai.APIConnectionError):
        async for e in await client.responses.create(model="m", input="hi", stream=True):
            seen.append(e)
    assert len(seen) == 3
    with pytest.raises(openai.APIConnectionError):
        async for _ in await client.chat.completions.create(model="m", messages=[user("hi")], stream=True):
            pass
    assert fake.stored == {}  # a broken response stores nothing


async def test_in_stream_errors(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="x", error_after=3), Reply(text="x", error_after=3, error_style="nested"),
                Reply(text="x", error_after=2, error_style="failed"),
                Reply(text="x", error_after=2, error_message="chat broke"))
    events = await collect(await client.responses.create(model="m", input="hi", stream=True))
    assert isinstance(events[-1], ResponseErrorEvent) and len(events) == 4
    assert events[-1].code == "server_error" and events[-1].sequence_number == 3

    with pytest.raises(openai.APIError) as err:
        await collect(await client.responses.create(model="m", input="hi", stream=True))
    assert err.value.message == "fake provider: scripted in-stream error"

    events = await collect(await client.responses.create(model="m", input="hi", stream=True))
    assert isinstance(events[-1], ResponseFailedEvent) and events[-1].response.status == "failed"
    assert events[-1].response.error is not None and events[-1].response.error.code == "server_error"

    with pytest.raises(openai.APIError, match="chat broke"):
        await collect(await client.chat.completions.create(model="m", messages=[user("hi")], stream=True))


async def wait_until(cond: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def test_hang_then_client_cancel_counts_disconnect(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="never finished", hang_after=3))
    stream = await client.responses.create(model="m", input="hi", stream=True)
    it = stream.__aiter__()
    got = [await it.__anext__() for _ in range(3)]
    assert got[-1].type == "response.output_item.added"
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(it.__anext__(), 0.2)
    await stream.close()
    await wait_until(lambda: fake.disconnected_early == 1)


async def test_hang_until_read_timeout(fake: FakeProvider) -> None:
    client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0, timeout=0.3)
    fake.script(Reply(text="x", hang_after=99))  # clamped: hangs before response.completed
    seen: list[Any] = []
    with pytest.raises(openai.APITimeoutError):
        async for e in await client.responses.create(model="m", input="hi", stream=True):
            seen.append(e)
    assert seen and seen[-1].type == "response.output_item.done"
    await client.close()
    await wait_until(lambda: fake.disconnected_early == 1)


async def test_delay_then_abort_counts_disconnect(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.script(Reply(text="slow " * 10, chunks=10, delay=0.05))
    stream = await client.chat.completions.create(model="m", messages=[user("hi")], stream=True)
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    await stream.close()
    await wait_until(lambda: fake.disconnected_early == 1)


async def test_stop_ends_hanging_stream() -> None:
    fake = FakeProvider().start()
    client = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0, timeout=5)
    fake.script(Reply(text="x", hang_after=1))
    stream = await client.responses.create(model="m", input="hi", stream=True)
    started = time.monotonic()
    await asyncio.get_running_loop().run_in_executor(None, fake.stop)
    with pytest.raises(openai.APIConnectionError):
        await collect(stream)
    assert time.monotonic() - started < 2 and fake.disconnected_early == 0
    await client.close()


async def test_no_responses_route(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.responses_route = False
    fake.script(Reply(text="chat still works"))
    with pytest.raises(openai.NotFoundError) as err:
        await client.responses.create(model="m", input="hi", stream=True)
    assert err.value.response.text == "404 page not found"
    assert err.value.response.headers["content-type"].startswith("text/plain")
    done = await client.chat.completions.create(model="m", messages=[user("hi")])
    assert done.choices[0].message.content == "chat still works"


async def test_supports_tools_false(fake: FakeProvider, client: AsyncOpenAI) -> None:
    fake.supports_tools = False
    fake.script(Reply(text="no tools"))
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input="hi", tools=[TOOL])  # type: ignore[list-item]
    assert err.value.body == {"message": "tools is not supported with this model", "type": "invalid_request_error",
                              "param": "tools", "code": "unsupported_parameter"}
    with pytest.raises(openai.BadRequestError, match="tools is not supported"):
        await client.chat.completions.create(model="m", messages=[user("hi")], tools=[CHAT_TOOL])  # type: ignore[list-item]
    assert (await client.responses.create(model="m", input="hi")).output_text == "no tools"


def test_wait_for_requests_times_out() -> None:
    with FakeProvider() as fake:
        with pytest.raises(TimeoutError):
            fake.wait_for_requests(1, timeout=0.05)
        assert fake.wait_for_requests(0) == []


# ------------------------------------------------------------------ the SDK's request types


async def test_sdk_types_refuse_a_reasoning_item_without_its_id(fake: FakeProvider, client: AsyncOpenAI) -> None:
    """The issue's 400 on the real API, from an inline reasoning item of a pruned view."""
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[
            user("a"), {"type": "reasoning", "summary": [], "encrypted_content": "E"}, user("b")])
    assert err.value.body == {"message": "Missing required parameter: 'input[1].id'.", "type": "invalid_request_error",
                              "param": "input[1].id", "code": "missing_required_parameter"}
    assert len(fake.rejections) == 1


async def test_sdk_types_refuse_an_unknown_field_anywhere(fake: FakeProvider, client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[
            user("a"), {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}", "bogus": 1},
            {"type": "function_call_output", "call_id": "c", "output": "x"}])
    assert err.value.body["param"] == "input[1].bogus"  # type: ignore[index]
    assert err.value.body["code"] == "unknown_parameter"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError, match="Unknown parameter: 'messages\\[0\\].nope'"):
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi", "nope": 1}])  # type: ignore[list-item,misc]
    with pytest.raises(openai.BadRequestError, match="Unknown parameter: 'temperatur'"):
        await client.responses.create(model="m", input="hi", extra_body={"temperatur": 0})


async def test_sdk_types_refuse_a_wrong_type_deep_in_an_item(fake: FakeProvider, client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[
            user("a"), {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": 5}])  # type: ignore[list-item,typeddict-item]
    assert err.value.body["param"] == "input[2].output"  # type: ignore[index]
    assert err.value.body["code"] == "invalid_type"  # type: ignore[index]
    # An output_text part is an output message's, which needs a stored id: not valid inline.
    with pytest.raises(openai.BadRequestError) as err:
        await client.responses.create(model="m", input=[
            user("a"), {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "t"}]}])  # type: ignore[list-item]
    assert err.value.body["param"] == "input[1].content[0].type"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError, match="Invalid type for 'messages\\[1\\].content'"):
        await client.chat.completions.create(model="m", messages=[user("hi"), {"role": "assistant", "content": 3}])  # type: ignore[list-item,misc]
    assert fake.pending == 0 and len(fake.rejections) == 3
