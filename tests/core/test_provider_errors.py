"""Provider failures, the service in-process over the real HTTP fake: retries, mid-stream errors,
fallbacks, lost stored items."""

from __future__ import annotations

import re

from tests.fake_provider import Call, HttpError, Reply
from tests.support.service import service_harness


async def test_500_then_success(harness):
    harness.fake.script(HttpError(500, "upstream hiccup"), HttpError(429, "slow down", retry_after=0.1), Reply(text="fine now"))
    result = await harness.chat("hello")
    assert result["status"] == "completed" and result["text"] == "fine now"
    notices = [e["message"] for e in harness.of_turn(result["turnId"]) if e["type"] == "notice"]
    # The default retryBackoff, 0.5 s, plus up to 0.1 s of jitter (agent/provider/openai_provider.py).
    assert len(notices) == 2 and re.search(r"retrying in 0\.[56] s \(1/3\)", notices[0]), notices
    assert len(harness.fake.requests) == 3


async def test_retries_give_up_after_three(harness):
    harness.service.update_settings({"retryBackoff": 0.01})  # the count matters here, not the wait
    harness.fake.script(*[HttpError(503, "down")] * 4)
    result = await harness.chat("hello")
    assert result["status"] == "error" and "down" in result["error"]
    assert len(harness.fake.requests) == 4
    notices = [e["message"] for e in harness.of_turn(result["turnId"]) if e["type"] == "notice"]
    # 0.01 s, 0.02 s, 0.04 s, each plus up to 0.1 s of jitter: not the default 0.5, 1 and 2 s.
    assert [re.sub(r"in 0\.[01] s", "in ~0 s", n.split("; ")[-1]) for n in notices] == [
        "retrying in ~0 s (1/3)", "retrying in ~0 s (2/3)", "retrying in ~0 s (3/3)"]


async def test_400_is_not_retried(harness):
    harness.fake.script(HttpError(400, "bad model name", type="invalid_request_error", param="model"))
    result = await harness.chat("hello")
    assert result["status"] == "error" and "bad model name" in result["error"]
    assert len(harness.fake.requests) == 1


async def test_mid_stream_error_keeps_partial_text(harness):
    harness.fake.script(Reply(text="the first half and the second half", chunks=6, error_after=6))
    result = await harness.chat("hello")
    assert result["status"] == "error"
    assert result["text"] and "the first half".startswith(result["text"][:10])
    assert len(harness.fake.requests) == 1  # output had started: no retry
    harness.fake.script(Reply(text="recovered"))
    again = await harness.chat("continue")
    assert again["status"] == "completed"
    kept = [i for i in harness.fake.requests[1].body["input"] if i.get("role") == "assistant"]
    assert kept and kept[0]["content"] == result["text"]


async def test_broken_stream_drops_half_received_call(harness):
    harness.fake.script(Reply(text="Let me check", calls=[Call("run_command", {"command": "echo hi"})], chunks=4, break_after=12))
    result = await harness.chat("check")
    assert result["status"] == "error"
    assert not any(e["type"] in ("tool_call", "tool_result") for e in harness.of_turn(result["turnId"]))
    harness.fake.script(Reply(text="ok"))
    await harness.chat("again")
    assert not harness.fake.rejections
    assert not any(i.get("type") == "function_call" for i in harness.fake.requests[-1].body["input"])


async def test_tools_rejected_retries_once_without_tools(harness):
    harness.fake.supports_tools = False
    harness.fake.script(Reply(text="no tools here"))
    result = await harness.chat("hello")
    assert result["status"] == "completed" and result["text"] == "no tools here"
    assert len(harness.fake.requests) == 2 and "tools" not in harness.fake.requests[1].body


async def test_wire_auto_falls_back_to_chat(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace, wireApi="auto") as h:
        fake.responses_route = False
        fake.script(Reply(text="via chat"), Reply(text="still chat"))
        result = await h.chat("hello")
        assert result["status"] == "completed" and result["text"] == "via chat"
        await h.chat("again")
        assert [r.api for r in fake.requests] == ["responses", "chat", "chat"]


async def test_missing_stored_item_is_resent_inline_once(harness):
    harness.fake.script(Reply(text="first"), Reply(text="second"))
    await harness.chat("one")
    harness.fake.forget_items()
    result = await harness.chat("two")
    assert result["status"] == "completed" and result["text"] == "second"
    notices = [e["message"] for e in harness.of_turn(result["turnId"]) if e["type"] == "notice"]
    assert notices == [
        "the provider no longer had part of this session stored. Re-sent the history inline and carried on."
    ]
    assert not any(i.get("type") == "item_reference" for i in harness.fake.requests[-1].body["input"])


async def test_max_steps_stops_the_turn_with_a_notice(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace, maxSteps=2) as h:
        fake.script(*[Reply(calls=[Call("list_files", {})]) for _ in range(3)])
        result = await h.chat("loop forever")
        assert result["status"] == "completed"
        assert len(fake.requests) == 2
        notice = [e for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert notice and "maxSteps" in notice[-1]["message"]
