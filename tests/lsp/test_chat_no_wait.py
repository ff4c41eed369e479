"""`shiro.chat {wait: false}` and a visible pending approval (issue 26): for clients whose requests
time out (Emacs's jsonrpc gives up after 10 s), and for a dialog the user dismissed without an
answer, which left the turn waiting with nothing to show for it."""

from __future__ import annotations

from tests.fake_provider import Call, Reply
from tests.support.lsp import HANG, server_env, start_client


async def test_no_wait_chat_answers_at_once_and_a_waiting_approval_is_visible(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url))
    try:
        fake.script(
            Reply(calls=[Call("run_command", {"command": "echo hi"}, "call_run")]),
            Reply(text="It was not allowed."),
            Reply(text="Second answer."),
        )
        h.answers = [HANG]  # the dialog stays open
        first = await h.chat("run it", wait=False)
        assert first["status"] == "started" and first["text"] == "" and first["turnId"]
        await h.wait_for(lambda: any(s.get("waiting") == "approval" for s in h.statuses))
        waiting = next(s for s in h.statuses if s.get("waiting") == "approval")
        assert waiting["waitingTool"] == "run_command" and waiting["running"] is True

        # A prompt sent meanwhile is queued, and says why it does not run.
        second = await h.chat("and then?", wait=False)
        assert second["status"] == "started"
        await h.wait_for(lambda: "notice" in h.types_of(second["turnId"]))
        [notice] = [e for e in h.of_turn(second["turnId"]) if e["type"] == "notice"]
        assert "waiting for your answer" in notice["message"] and "echo hi" in notice["message"]

        h.hang.set()  # dismissed: a deny; the turn goes on, then the queued prompt runs
        for turn in (first, second):
            await h.wait_for(lambda turn=turn: "turn_end" in h.types_of(turn["turnId"]))
        [end] = [e for e in h.of_turn(second["turnId"]) if e["type"] == "turn_end"]
        assert end["status"] == "completed" and end["text"] == "Second answer."
        assert h.statuses[-1]["waiting"] is None and h.statuses[-1]["running"] is False

        # A wait:false prompt cleared from the queue by shiro.abort still gets its turn_end.
        fake.script(Reply(text="slow " * 50, chunks=50, delay=0.2), Reply(text="never"))
        running = await h.chat("a long one", wait=False)
        await h.wait_for(lambda: "text_delta" in h.types_of(running["turnId"]))
        queued = await h.chat("queued", wait=False)
        await h.wait_for(lambda: "queued" in h.types_of(queued["turnId"]))
        aborted = await h.command("shiro.abort", {})
        assert aborted["clearedQueued"] == 1
        for turn in (running, queued):
            await h.wait_for(lambda turn=turn: "turn_end" in h.types_of(turn["turnId"]))
        assert [e["status"] for e in h.of_turn(queued["turnId"]) if e["type"] == "turn_end"] == ["aborted"]
    finally:
        await h.client.shutdown_session()
        await h.client.stop()
