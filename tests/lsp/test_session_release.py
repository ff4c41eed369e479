"""A session that is saved, idle and no longer any workspace's current one leaves the server's
memory and gives back its lease (server/features/sessions.py `release_idle`); resuming it later
loads it from disk as usual. Without this, a server that starts a new session per turn keeps
every old transcript for ever."""

from __future__ import annotations

import asyncio

import pytest
from pygls.exceptions import JsonRpcException

from tests.fake_provider import Reply
from tests.support.lsp import start_server, stop


async def test_a_replaced_saved_session_is_released_and_still_resumable(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    b = None
    try:
        fake.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="after resume"))
        first = await a.chat("first session")
        await a.command("shiro.newSession")
        second = await a.chat("second session")
        assert second["sessionId"] != first["sessionId"]
        # The release follows the second session's save, which may land just after its answer.
        record = tmp_path / "home" / "sessions" / f"{second['sessionId']}.json"
        for _ in range(600):
            if record.exists():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        # The first session is no longer open on this server: a chat naming it is refused...
        with pytest.raises(JsonRpcException, match="no open session"):
            await a.chat("into the old one", sessionId=first["sessionId"])
        # ...and its lease is free: another window resumes it as it is, not as a fork.
        b = await start_server(tmp_path, fake, workspace, "neovim")
        taken = await b.command("shiro.resume", {"id": first["sessionId"]})
        assert taken.get("forkedFrom") is None and taken["sessionId"] == first["sessionId"]
        assert len(taken["messages"]) == 2
        await stop(b)
        b = None
        # Resumed here again from disk, it carries on where it was.
        resumed = await a.command("shiro.resume", {"id": first["sessionId"]})
        assert resumed["sessionId"] == first["sessionId"] and resumed.get("forkedFrom") is None
        assert [m["role"] for m in resumed["messages"]] == ["user", "assistant"]
        more = await a.chat("more in the first")
        assert more["sessionId"] == first["sessionId"] and more["text"] == "after resume"
    finally:
        if b is not None:
            await stop(b)
        await stop(a)


async def test_the_current_session_and_one_with_a_turn_running_stay(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    try:
        fake.script(Reply(text="only answer"))
        first = await a.chat("the one session")
        # Still the workspace's current session: a chat naming it works (it was never dropped).
        fake.script(Reply(text="again"))
        again = await a.chat("again", sessionId=first["sessionId"])
        assert again["sessionId"] == first["sessionId"] and again["status"] == "completed"
    finally:
        await stop(a)
