"""`maxCostUsd` through the real server (issue 39): the turn stops with a notice before a request
whose estimated cost (its input tokens at the model's price plus what the turn spent) would pass
the limit; the request is never sent."""

from __future__ import annotations

from tests.fake_provider import Call, Reply
from tests.support.lsp import start_server, stop


async def test_a_turn_stops_before_the_request_that_would_pass_the_limit(tmp_path, fake, workspace):
    # gpt-5: $1.25 per 1M input tokens, $10 per 1M output tokens (agent/provider/pricing.py).
    h = await start_server(tmp_path, fake, workspace, settings={"model": "gpt-5", "maxCostUsd": 1.0, "approvals": "auto",
                                                                "sandbox": "off"})
    try:
        # The first response costs $1.25 + $0.10: the second request, whatever its size, would pass $1.
        fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"}, "c1")], usage=(1_000_000, 10_000)))
        result = await h.chat("go")
        assert result["status"] == "completed"
        assert len(fake.main_requests) == 1
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert any(n.startswith("cost limit:") and "maxCostUsd = $1" in n for n in notices), notices
        tool = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert len(tool) == 1 and "hi" in tool[0]["output"]  # the calls of the last response still ran

        # The next turn starts from zero: a request within the limit goes.
        fake.script(Reply(text="fine", usage=(1000, 10)))
        again = await h.chat("again")
        assert again["status"] == "completed" and again["text"] == "fine"
        assert len(fake.main_requests) == 2
    finally:
        await stop(h)


async def test_no_request_at_all_when_even_the_first_would_pass(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, settings={"model": "gpt-5", "maxCostUsd": 0.000001})
    try:
        result = await h.chat("hello")
        assert result["status"] == "completed" and result["text"] == ""
        assert fake.main_requests == []
        assert any(e["type"] == "notice" and e["message"].startswith("cost limit:") for e in h.of_turn(result["turnId"]))
    finally:
        await stop(h)


async def test_an_unpriced_model_is_not_stopped_and_says_so_once(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, settings={"model": "local-model", "maxCostUsd": 0.000001,
                                                                "approvals": "auto", "sandbox": "off"})
    try:
        fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"}, "c1")]), Reply(text="done"))
        result = await h.chat("go")
        assert result["text"] == "done"
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice" and "maxCostUsd" in e["message"]]
        assert len(notices) == 1 and "local-model" in notices[0]
    finally:
        await stop(h)
