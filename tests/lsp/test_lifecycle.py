"""Server lifecycle: shutdown during a turn, pipe closed without shutdown."""

from __future__ import annotations

import asyncio

from tests.fake_provider import Reply
from tests.support.lsp import server_env, start_client


async def test_shutdown_during_a_turn_answers_cleanly(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code", server_env(home, fake.base_url))
    fake.script(Reply(text="a long answer " * 20, chunks=40, delay=0.05))
    running = h.start_chat("talk")
    await h.wait_for(lambda: any(e["type"] == "text_delta" for e in h.events))
    await asyncio.wait_for(h.client.shutdown_async(None), timeout=60)  # answered, not -32603
    done, _ = await asyncio.wait([running], timeout=60)
    assert done, "the running shiro.chat was never answered"
    h.client.exit(None)
    code = await asyncio.wait_for(h.client._server.wait(), timeout=60)
    assert code == 0
    assert any(e["type"] == "turn_end" and e["status"] == "aborted" for e in h.events)
    await h.client.stop()


async def test_pipe_closed_without_shutdown_flushes_and_logs(tmp_path, fake, workspace, capfd):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "neovim", server_env(home, fake.base_url))
    fake.script(Reply(text="hi"))
    result = await h.chat("hello there")
    server = h.client._server
    server.stdin.close()
    code = await asyncio.wait_for(server.wait(), timeout=60)
    assert code is not None
    await asyncio.sleep(0.2)  # let the client forward the last stderr lines
    await h.client.stop()
    err = capfd.readouterr().err
    assert 'Saved 2 messages: "hello there"' in err and result["sessionId"][:8] in err
    assert (home / "sessions" / f"{result['sessionId']}.json").exists()


async def test_shutdown_of_an_empty_session_says_it_was_never_written(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code", server_env(home, fake.base_url))
    await h.command("shiro.status")
    await h.client.shutdown_session()
    await h.client.stop()
    logs = [m.message for m in h.client.log_messages]
    assert any("no messages" in line and "never written" in line for line in logs), logs
    assert not (home / "sessions").exists() or not list((home / "sessions").glob("*.json"))


async def test_api_key_is_never_stored_or_logged(tmp_path, fake, workspace, capfd):
    home = tmp_path / "home"
    secret = "sk-test-very-secret-key-0123456789abcdef"
    env = server_env(home, fake.base_url, api_key=secret, SHIRO_LOG="DEBUG")
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "neovim", env)
    fake.script(Reply(text="ok"), Reply(text="fine"))
    await h.chat("hello")
    await h.command("shiro.remember", {"kind": "fact", "text": "a note"})
    await h.chat("again")
    await h.client.shutdown_session()
    await h.client.stop()
    assert fake.requests[0].headers["authorization"] == f"Bearer {secret}"  # it was used...
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path  # ...but never stored
    assert secret not in capfd.readouterr().err
