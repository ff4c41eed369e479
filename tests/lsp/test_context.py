"""The 404 repair end to end: a second missing stored item in one turn, the provider forgetting
again while the user answers the approval dialog (the rest of context management:
tests/core/test_context.py)."""

from __future__ import annotations

from tests.fake_provider import Call, Reply
from tests.support.lsp import start_server, stop


async def test_second_missing_item_in_a_turn_is_an_error(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace)
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
        await stop(h)
