"""`shiro acp` driven by the official Python ACP client: a model refusal on both wire APIs
(`stopReason: refusal`), `/compact` and `/memory` end to end, and `mcpServers` given on
`session/load` (a real mcp-server-time) usable in the next turn."""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import datetime, timezone

import pytest
from acp import schema

from tests.acp.conftest import records, run_acp, settings_file
from tests.fake_provider import Call, RecordedRequest, Reply
from tests.mcp.helpers import time_server

REFUSAL = "I can't help with that request."


async def _saved(acp, session_id: str) -> dict:
    for _ in range(200):
        found = [r for r in records(acp.home) if r["id"] == session_id]
        if found and any(m["role"] == "assistant" for m in found[0]["messages"]):
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError("the session was not saved")


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_a_refusal_ends_the_turn_with_stop_reason_refusal(tmp_path, fake, workspace, wire):
    config = settings_file(tmp_path, {"wireApi": wire})
    async with run_acp(tmp_path / "home", workspace, fake, SHIRO_NEKO_CONFIG=config) as acp:
        fake.script(Reply(refusal=REFUSAL, chunks=3), Reply(text="That I can do."))
        session_id = await acp.new_session()
        answer = await acp.prompt(session_id, "do something I won't do")
        assert answer.stop_reason == "refusal"
        assert acp.client.text() == REFUSAL  # the editor shows what the model said
        assert [r.api for r in fake.requests] == [wire]
        record = await _saved(acp, session_id)
        [answer_message] = [m for m in record["messages"] if m["role"] == "assistant"]
        part = answer_message["content"][-1]
        assert (part["type"], part["text"], part["refusal"]) == ("text", REFUSAL, True)
        # The next turn is an ordinary one, and the model is told what it declined.
        assert (await acp.prompt(session_id, "something else then")).stop_reason == "end_turn"
        second = fake.requests[1].body
        if wire == "responses":  # stored: sent back by reference to the refusal message
            # [0] the context message (server/agent/context_messages.py), [1] the prompt.
            assert fake.stored[second["input"][2]["id"]]["content"] == [{"type": "refusal", "refusal": REFUSAL}]
        else:
            assert second["messages"][3] == {"role": "assistant", "content": REFUSAL}
        assert not fake.rejections


async def test_compact_answers_with_the_summary_and_the_next_request_carries_it(acp):
    acp.fake.script(Reply(text="It prints hello."), Reply(text="Next answer."))
    summary = "## Goal\n- explain hello.py\n## What remains\n- nothing (compact-marker-7)"
    asked: list[RecordedRequest] = []

    def side(req: RecordedRequest) -> Reply:
        asked.append(req)
        return Reply(text=summary)

    session_id = await acp.new_session()
    await acp.prompt(session_id, "what does hello.py do?")
    acp.fake.side_reply = side
    acp.client.updates.clear()
    assert (await acp.prompt(session_id, "/compact the greeting")).stop_reason == "end_turn"
    answer = acp.client.text()
    assert answer.startswith("Compacted 2 messages to 1.") and "compact-marker-7" in answer
    [request] = asked
    body = json.dumps(request.body)
    assert "what does hello.py do?" in body and "It prints hello." in body and "the greeting" in body
    assert (await acp.prompt(session_id, "carry on")).stop_reason == "end_turn"
    sent = acp.fake.main_requests[-1].body["input"]
    assert "compact-marker-7" in sent[0]["content"][0]["text"]  # the summary replaced the history
    assert "It prints hello." not in json.dumps(sent)


async def test_memory_merges_through_the_model_and_shows_the_entries(acp):
    now = datetime.now(timezone.utc).isoformat()
    entries = [{"kind": "fact", "text": f"fact {i} about the api", "hits": 1, "createdAt": now, "lastUsedAt": now}
               for i in range(60)]
    entries += [{"kind": "gotcha", "text": "the migration runs first", "hits": 0, "createdAt": now},
                {"kind": "gotcha", "text": "run the migration before the seed", "hits": 0, "createdAt": now}]
    key = hashlib.sha256(str(acp.root.resolve()).encode()).hexdigest()[:16]
    (acp.home / "memory").mkdir(parents=True, exist_ok=True)
    (acp.home / "memory" / f"{key}.json").write_text(json.dumps({"entries": entries}))
    merged = {"entries": [{"kind": "gotcha", "text": "run the migration before the seed (merged)"}]}
    acp.fake.script(Reply(text=json.dumps(merged)))
    session_id = await acp.new_session()
    assert (await acp.prompt(session_id, "/memory")).stop_reason == "end_turn"
    answer = acp.client.text()
    assert answer.startswith("Memory compacted: 62 entries to 61.")
    assert "- **gotcha** run the migration before the seed (merged) _(hits 0)_" in answer
    assert "- **fact** fact 0 about the api _(hits 1)_" in answer and "the migration runs first" not in answer
    [side] = acp.fake.requests
    assert "tools" not in side.body and "the migration runs first" in json.dumps(side.body)
    stored = json.loads((acp.home / "memory" / f"{key}.json").read_text())["entries"]
    assert len(stored) == 61


async def test_load_with_mcp_servers_starts_them_for_the_next_turn(tmp_path, fake, workspace):
    home = tmp_path / "home"
    fake.script(Reply(text="Hello."))
    async with run_acp(home, workspace, fake) as acp:
        session_id = await acp.new_session()
        await acp.prompt(session_id, "hi")
    assert "mcp__time__get_current_time" not in [t["name"] for t in fake.requests[0].body["tools"]]
    server = schema.McpServerStdio(name="time", command=time_server(), args=["--local-timezone", "UTC"], env=[])
    # A loaded machine must not turn a slow start into a "still starting" notice (nothing here times it).
    async with run_acp(home, workspace, fake, args=("--approvals", "auto"), SHIRO_MCP_TURN_WAIT="60") as acp:
        await acp.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[server])
        fake.script(
            Reply(calls=[Call("mcp__time__get_current_time", {"timezone": "UTC"}, "call_t")]),
            Reply(text="It is now."),
        )
        assert (await acp.prompt(session_id, "what time is it?")).stop_reason == "end_turn"
        first, second = (await acp.requests(3))[1:3]
        assert "mcp__time__get_current_time" in [t["name"] for t in first.body["tools"]]
        assert len(first.body["input"]) > 1  # the loaded history went with it
        [done] = [u for u in acp.client.of_kind("tool_call_update") if u.tool_call_id == "call_t" and u.status != "in_progress"]
        assert done.status == "completed" and "UTC" in done.raw_output
        assert "UTC" in json.dumps(second.body["input"])


async def test_effort_sets_the_next_requests_reasoning_effort(acp):
    acp.fake.script(Reply(text="thought hard"))
    session_id = await acp.new_session()
    assert (await acp.prompt(session_id, "/effort high")).stop_reason == "end_turn"
    assert "high (from the next request)" in acp.client.text()
    await acp.prompt(session_id, "think")
    assert acp.fake.main_requests[-1].body["reasoning"] == {"effort": "high", "summary": "auto"}
    acp.client.updates.clear()
    await acp.prompt(session_id, "/effort extreme")
    assert "unknown effort 'extreme'" in acp.client.text() and not acp.fake.rejections


async def test_model_lists_the_endpoints_models_and_sets_the_next_requests_model(acp):
    # Issue 39: /model in an ACP editor (server/acp/slash.py).
    acp.fake.models = ["fake-model", "fake-model-large"]
    acp.fake.script(Reply(text="on the large one"))
    session_id = await acp.new_session()
    await acp.prompt(session_id, "/model")
    listed = acp.client.text()
    assert "`fake-model-large`" in listed and "(from settings)" in listed, listed
    acp.client.updates.clear()
    await acp.prompt(session_id, "/model fake-model-large")
    assert "Model: fake-model-large (from the next request)." in acp.client.text()
    await acp.prompt(session_id, "go")
    assert acp.fake.main_requests[-1].body["model"] == "fake-model-large"
