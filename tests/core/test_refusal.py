"""A refusal from the model (Responses `refusal` content, Chat `delta.refusal`) as a client sees it: streamed
as the assistant's text, flagged on `turn_end` and the `shiro.chat` result, saved in the record,
and sent back to the model on the next turn. The service in-process through the command glue."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.fake_provider import Reply
from tests.support.service import service_harness

REFUSAL = "I can't help with that request."


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_a_refusal_is_shown_flagged_saved_and_sent_back(shiro_home, fake, workspace, wire):
    home = shiro_home
    async with service_harness(fake, home, workspace, wireApi=wire) as h:
        fake.script(Reply(refusal=REFUSAL, chunks=3), Reply(text="Sure, that one I can do."))
        result = await h.chat("do something I won't do")
        assert result["status"] == "completed" and result["refused"] is True and result["text"] == REFUSAL
        events = h.of_turn(result["turnId"])
        assert "".join(e["text"] for e in events if e["type"] == "text_delta") == REFUSAL
        [end] = [e for e in events if e["type"] == "turn_end"]
        assert end["refused"] is True and end["text"] == REFUSAL

        after = await h.chat("something else then")
        assert "refused" not in after and "refused" not in [e for e in h.of_turn(after["turnId"]) if e["type"] == "turn_end"][0]
        second = fake.requests[1].body
        # Right after the first prompt (context messages, agent/context_messages.py, may come before it).
        items = second["input"] if wire == "responses" else second["messages"]
        after_prompt = items[next(i for i, m in enumerate(items) if "do something I won't do" in json.dumps(m)) + 1]
        if wire == "responses":  # stored: the refusal message goes back by reference
            assert after_prompt["type"] == "item_reference"
            assert fake.stored[after_prompt["id"]]["content"] == [{"type": "refusal", "refusal": REFUSAL}]
        else:
            assert after_prompt == {"role": "assistant", "content": REFUSAL}
        assert not fake.rejections

        saved = await h.command("shiro.save")
        assert saved["saved"] is True
        record = json.loads((home / "sessions" / f"{result['sessionId']}.json").read_text())
        dialogue = [m for m in record["messages"] if not m.get("context")]  # without the context messages
        refusal_part = dialogue[1]["content"][-1]
        assert refusal_part["type"] == "text" and refusal_part["text"] == REFUSAL and refusal_part["refusal"] is True
        resumed = await h.command("shiro.resume", {"id": result["sessionId"]})
        assert resumed["messages"][1]["content"][-1]["refusal"] is True


async def test_a_refused_compaction_leaves_the_transcript(harness):
    harness.fake.script(Reply(text="first answer"), Reply(refusal="I won't summarise this."))
    await harness.chat("hello")
    status = await harness.command("shiro.status")
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException) as refused:
        await harness.command("shiro.compact")
    assert "declined" in refused.value.message and "I won't summarise this." in refused.value.message
    await asyncio.sleep(0)
    assert (await harness.command("shiro.status"))["contextTokens"] == status["contextTokens"]
