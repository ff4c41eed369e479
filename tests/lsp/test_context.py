"""Context management end to end: pruning a long turn, span summaries, the 404 repair, /compact."""

from __future__ import annotations

import json

import pytest
from pygls.exceptions import JsonRpcException

from tests.fake_provider import Call, HttpError, Reply
from tests.lsp.conftest import server_env, start_client


def _is_side_request(req) -> bool:
    return "tools" not in req.body


async def _client(tmp_path, fake, workspace, **options):
    home = tmp_path / "home"
    return await start_client(
        {"fake": fake, "home": home, "root": workspace}, "visual-studio-code", server_env(home, fake.base_url), init_options=options
    )


async def test_long_turn_with_small_threshold(tmp_path, fake, workspace):
    (workspace / "big.txt").write_text("line of a rather large file\n" * 80)
    steps = 200
    made = {"main": 0, "summaries": 0}

    def respond(req):
        if _is_side_request(req):
            made["summaries"] += 1
            return Reply(text=f"summary {made['summaries']}: read big.txt many times")
        made["main"] += 1
        if made["main"] > steps:
            return Reply(text="all done")
        return Reply(reasoning="keep reading", encrypted=f"enc{made['main']}", text="reading", calls=[Call("read_file", {"path": "big.txt"})])

    fake.script(*[respond] * (steps + 40))
    h = await _client(tmp_path, fake, workspace, compactThreshold=6000, maxSteps=steps + 5)
    try:
        result = await h.chat("read big.txt over and over")
        assert result["status"] == "completed" and result["text"] == "all done"
        assert fake.rejections == []  # no 400 or 404, ever
        for req in fake.requests:
            if _is_side_request(req):
                continue
            calls = set()
            for item in req.body["input"]:
                if item.get("type") == "item_reference":
                    item = fake.stored.get(item["id"], item)
                if item.get("type") == "function_call":
                    calls.add(item["call_id"])
                if item.get("type") == "function_call_output":
                    assert item["call_id"] in calls  # never a result without its call
        compacted = [e for e in h.of_turn(result["turnId"]) if e["type"] == "compacted"]
        assert len(compacted) == 1
        event = compacted[0]
        assert event["message"] == f"context compacted: {event['before']} messages pruned to {event['after']} on the wire"
        assert event["after"] <= event["before"]  # the first rung may only strip reasoning
        last_main = [r for r in fake.requests if not _is_side_request(r)][-1]
        assert len(last_main.body["input"]) < 2 * steps  # far fewer items than the transcript holds
        mine = [s for s in h.statuses if s["sessionId"] == result["sessionId"]]
        assert len(mine) >= steps and max(s["contextPercent"] for s in mine) > 100
        assert mine[-1]["level"] == "red"
        pruned_requests = [r for r in fake.requests if not _is_side_request(r) and not any(i.get("type") == "item_reference" for i in r.body["input"])]
        assert pruned_requests  # pruning strips every item id
        assert made["summaries"] >= 1
        markers = [i for r in fake.requests[-3:] for i in r.body["input"] if i.get("role") == "user" and "summary " in json.dumps(i)]
        assert markers, "the pruned span's summary was not placed in the request"
        await h.command("shiro.save")
        record = json.loads(next((h.home / "sessions").glob("*.json")).read_text())
        assert len(record["messages"]) == 1 + 2 * steps + 1  # the record keeps everything
        assert record["spanSummaries"] and all(v.startswith("summary") for v in record["spanSummaries"].values())
    finally:
        await h.client.shutdown_session()
        await h.client.stop()


async def test_failed_summary_leaves_pruning_alone(tmp_path, fake, workspace):
    (workspace / "big.txt").write_text("x" * 3000)

    def respond(req):
        if _is_side_request(req):
            return HttpError(400, "no summaries today", type="invalid_request_error")
        return None

    main = [Reply(calls=[Call("read_file", {"path": "big.txt"})]) for _ in range(12)] + [Reply(text="finished")]

    def step(req):
        return respond(req) or main.pop(0)

    fake.script(*[step] * 40)
    h = await _client(tmp_path, fake, workspace, compactThreshold=3000)
    try:
        result = await h.chat("go")
        assert result["status"] == "completed" and result["text"] == "finished"
        assert any(e["type"] == "compacted" for e in h.of_turn(result["turnId"]))
        assert not fake.rejections
    finally:
        await h.client.shutdown_session()
        await h.client.stop()


async def test_second_missing_item_in_a_turn_is_an_error(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace)
    try:
        fake.script(Reply(text="first answer"))
        await h.chat("one")
        fake.forget_items()
        # The retried request answers with a stored call; while the user approves it, the provider
        # forgets again, so the next request of the same turn meets a 404 once more.
        h.answers = ["Allow"]
        h.before_answer = fake.forget_items
        fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"})]), Reply(text="never"))
        result = await h.chat("two")
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert notices.count(
            "the provider no longer had part of this session stored. Re-sent the history inline and carried on."
        ) == 1
        assert result["status"] == "error" and "not found" in result["error"]
    finally:
        await h.client.shutdown_session()
        await h.client.stop()


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
    assert result == {"summary": summary, "messagesBefore": 6, "messagesAfter": 1}
    side = harness.fake.requests[-1].body
    assert "tools" not in side and "## Goal" in side["instructions"] and "the release" in json.dumps(side["input"])
    record = json.loads((harness.home / "sessions" / f"{first['sessionId']}.json").read_text())
    assert len(record["messages"]) == 1 and summary in record["messages"][0]["content"][0]["text"]
    assert record["notebook"]["todos"] == [{"content": "ship it", "status": "in_progress"}]
    harness.fake.script(Reply(text="continuing"))
    await harness.chat("next")
    body = harness.fake.requests[-1].body
    assert summary in body["input"][0]["content"][0]["text"] and "[~] ship it" in body["instructions"]
    assert len(body["input"]) == 2


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
