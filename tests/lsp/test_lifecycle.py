"""Server lifecycle: shutdown during a turn, pipe closed without shutdown."""

from __future__ import annotations

import asyncio

from tests.fake_provider import Reply
from tests.lsp.conftest import server_env, start_client


async def test_shutdown_during_a_turn_answers_cleanly(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code", server_env(home, fake.base_url))
    fake.script(Reply(text="a long answer " * 20, chunks=40, delay=0.05))
    running = h.start_chat("talk")
    await h.wait_for(lambda: any(e["type"] == "text_delta" for e in h.events))
    await asyncio.wait_for(h.client.shutdown_async(None), timeout=10)  # answered, not -32603
    done, _ = await asyncio.wait([running], timeout=10)
    assert done, "the running shiro.chat was never answered"
    h.client.exit(None)
    code = await asyncio.wait_for(h.client._server.wait(), timeout=10)
    assert code == 0
    assert any(e["type"] == "turn_end" and e["status"] == "aborted" for e in h.events)
    await h.client.stop()


async def test_pipe_closed_without_shutdown_exits(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "neovim", server_env(home, fake.base_url))
    fake.script(Reply(text="hi"))
    await h.chat("hello")
    server = h.client._server
    server.stdin.close()
    code = await asyncio.wait_for(server.wait(), timeout=10)
    assert code is not None
    await h.client.stop()
