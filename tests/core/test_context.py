"""Context management, the service in-process: pruning a long turn, span summaries, /compact (a
second 404 while the user answers a dialog: tests/lsp/test_context.py)."""

from __future__ import annotations

import json

import pytest
from pygls.exceptions import JsonRpcException

from tests.fake_provider import Call, HttpError, Reply
from tests.support.service import service_harness


MARKER = "[Context note, not from the user: history was pruned here"
NO_SUMMARY = "No summary of that part is available"


def _is_side_request(req) -> bool:
    return "tools" not in req.body


def marker_segments(body) -> list[str]:
    """Each pruned span's marker text in a request, in order (one marker message may hold several)."""
    out = []
    for item in body["input"]:
        if item.get("role") != "user":
            continue
        text = "".join(c.get("text", "") for c in item["content"]) if isinstance(item["content"], list) else item["content"]
        if text.startswith(MARKER):
            out += [MARKER + seg for seg in text.split(MARKER)[1:]]
    return out




def _reading_loop(fake, steps: int) -> None:
    """A single prompt's long tool loop; summary requests are answered apart, numbered."""
    made = []

    def summary(req):
        made.append(req)
        return Reply(text=f"summary #{len(made)}: read big.txt, nothing changed")

    fake.side_reply = summary
    fake.script(
        *[Reply(reasoning="keep reading", encrypted=f"enc{k}", text=f"reading {k}", calls=[Call("read_file", {"path": "big.txt"})])
          for k in range(steps)],
        Reply(text="all done"),
    )


async def test_long_single_prompt_turn_carries_the_summaries_of_its_pruned_spans(shiro_home, fake, workspace, capsys):
    """The seed's target case: one prompt, a 40-step tool loop, a small threshold. Every pruned
    span is summarised once and every later request carries those summaries; only the newest span
    may go without one while it still grows."""
    (workspace / "big.txt").write_text("line of a rather large file\n" * 80)
    steps = 40
    _reading_loop(fake, steps)
    async with service_harness(fake, shiro_home, workspace, compactThreshold=6000, maxSteps=steps + 5) as h:
        result = await h.chat("read big.txt over and over")
        assert result["status"] == "completed" and result["text"] == "all done"
        assert fake.rejections == []  # no 400 or 404, ever
        main, summaries = fake.main_requests, fake.summary_requests
        assert len(main) == steps + 1 and len(fake.requests) == len(main) + len(summaries)
        assert all("tools" not in r.body for r in summaries)

        answered: list[str] = []  # summaries made so far, in request order
        without, carried_last = 0, []
        for req in fake.requests:
            if req in summaries:
                answered.append(f"summary #{len(answered) + 1}:")
                continue
            segments = marker_segments(req.body)
            missing = [k for k, seg in enumerate(segments) if NO_SUMMARY in seg]
            without += bool(missing)
            # At most the newest span goes without its summary, and only while it is newest.
            assert missing in ([], [len(segments) - 1]), segments
            text = "\n".join(segments)
            for made in answered:  # every summary made so far travels in every later request
                assert made in text, (made, segments)
            carried_last = segments
        # Summaries are bounded and each span is summarised once.
        assert 2 <= len(summaries) <= steps // 2
        await h.command("shiro.save")
        record = json.loads(next((h.home / "sessions").glob("*.json")).read_text())
        assert len(record["spanSummaries"]) == len(summaries)
        assert sorted(record["spanSummaries"].values()) == sorted(
            f"summary #{k + 1}: read big.txt, nothing changed" for k in range(len(summaries))
        )
        # The record keeps everything: the context message (server/agent/context_messages.py),
        # the prompt, each step's call and result, the answer.
        assert len(record["messages"]) == 1 + 1 + 2 * steps + 1
        assert sum(NO_SUMMARY not in seg for seg in carried_last) == len(summaries)

        # One report, the turn's deepest pruning in the seed's sentence: its first pruning left out
        # reasoning only (the replies carry some), later ones removed content.
        events = h.of_turn(result["turnId"])
        compacted = [e for e in events if e["type"] == "compacted"]
        assert len(compacted) == 1
        event = compacted[0]
        assert event["message"] == f"context compacted: {event['before']} messages pruned to {event['after']} on the wire"
        assert event["after"] < event["before"] and event["before"] > steps
        assert [e["type"] for e in events].index("compacted") < [e["type"] for e in events].index("turn_end")
        # The long turn on a reasoning model never sends an inline reasoning item (its id is required).
        assert not any(i.get("type") == "reasoning" and "id" not in i for r in main for i in r.body["input"])
        mine = [s for s in h.statuses if s["sessionId"] == result["sessionId"]]
        assert max(s["contextPercent"] for s in mine) > 100 and mine[-1]["level"] == "red"
        status = await h.command("shiro.status")  # the summaries' tokens count, and apart
        assert 0 < status["sideInputTokens"] < status["inputTokens"] and status["sideOutputTokens"] > 0
        assert not any(i.get("type") == "item_reference" for i in main[-1].body["input"])  # pruned views go inline
        with capsys.disabled():
            print(f"\n{steps}-step single-prompt turn, compactThreshold 6000: {len(fake.requests)} requests, "
                  f"{len(summaries)} summary requests, {without} requests with a marker without summary")


async def test_failed_summary_leaves_pruning_alone(shiro_home, fake, workspace):
    (workspace / "big.txt").write_text("x" * 3000)

    def respond(req):
        if _is_side_request(req):
            return HttpError(400, "no summaries today", type="invalid_request_error")
        return None

    main = [Reply(calls=[Call("read_file", {"path": "big.txt"})]) for _ in range(12)] + [Reply(text="finished")]

    def step(req):
        return respond(req) or main.pop(0)

    fake.script(*[step] * 40)
    async with service_harness(fake, shiro_home, workspace, compactThreshold=3000) as h:
        result = await h.chat("go")
        assert result["status"] == "completed" and result["text"] == "finished"
        assert any(e["type"] == "compacted" for e in h.of_turn(result["turnId"]))
        assert not fake.rejections
        # Summaries were asked for and failed, not at every step (a failed span is not retried this
        # turn), and the requests after a failure carry the marker that says none is available.
        asked = fake.summary_requests
        assert asked, "no span summary was ever asked for"
        assert len(asked) < len(fake.main_requests) - 1
        first_failure = fake.requests.index(asked[0])
        later = [r for r in fake.main_requests if fake.requests.index(r) > first_failure]
        assert later and all(NO_SUMMARY in "\n".join(marker_segments(r.body)) for r in later)
        assert not any("Summary of the pruned part" in "\n".join(marker_segments(r.body)) for r in fake.main_requests)


async def test_compact_replaces_transcript_and_keeps_tasks(harness):
    harness.fake.script(
        Reply(calls=[Call("todo_write", {"todos": [{"content": "ship it", "status": "in_progress"}]})]),
        Reply(text="planned"),
        Reply(text="more work"),
    )
    await harness.chat("plan the release")
    first = await harness.chat("keep going")
    summary = "## Goal\nship the release\n## Files touched\n- none\n## Decisions\n- none\n## Commands and outcomes\n- none\n## What remains\n- ship it"
    harness.fake.script(Reply(text=summary))
    result = await harness.command("shiro.compact", {"focus": "the release"})
    # 6 messages of dialogue (and 2 context messages, the model's: not counted).
    assert result == {"summary": summary, "messagesBefore": 6, "messagesAfter": 1}
    side = harness.fake.requests[-1].body
    assert "tools" not in side and "## Goal" in side["instructions"] and "the release" in json.dumps(side["input"])
    record = json.loads((harness.home / "sessions" / f"{first['sessionId']}.json").read_text())
    assert len(record["messages"]) == 1 and summary in record["messages"][0]["content"][0]["text"]
    assert record["notebook"]["todos"] == [{"content": "ship it", "status": "in_progress"}]
    harness.fake.script(Reply(text="continuing"))
    await harness.chat("next")
    body = harness.fake.requests[-1].body
    # After /compact the context is restated whole (the task list too) before the next prompt.
    assert summary in body["input"][0]["content"][0]["text"] and "[~] ship it" in json.dumps(body["input"][1])
    assert len(body["input"]) == 3  # the summary, the context, the prompt


async def test_side_requests_count_in_the_sessions_cost(harness):
    """A /compact spends tokens: they count in inputTokens/outputTokens/costUsd, and apart."""
    harness.fake.script(Reply(text="answer", usage=(100, 10)))
    await harness.chat("hi")
    harness.fake.script(Reply(text="## Goal\nsay hi", usage=(1000, 50)))
    await harness.command("shiro.compact")
    status = await harness.command("shiro.status")
    assert (status["inputTokens"], status["outputTokens"]) == (1100, 60)
    assert (status["sideInputTokens"], status["sideOutputTokens"]) == (1000, 50)
    await harness.command("shiro.save")
    record = json.loads(next((harness.home / "sessions").glob("*.json")).read_text())
    assert record["inputTokens"] == 1100 and record["sideUsage"] == {"inputTokens": 1000, "outputTokens": 50}


async def test_compact_refusals(harness):
    with pytest.raises(JsonRpcException) as caught:
        await harness.command("shiro.compact")
    assert caught.value.code == -32803 and "no messages" in caught.value.message
    harness.fake.script(Reply(text="x"))
    await harness.chat("hi")
    harness.fake.script(HttpError(400, "model refuses", type="invalid_request_error"))
    with pytest.raises(JsonRpcException) as caught:
        await harness.command("shiro.compact")
    assert "left as it was" in caught.value.message
    assert (await harness.command("shiro.status"))["contextTokens"] > 0
