"""Chat over the wire: the commands advertised, `$/cancelRequest`, settings from the client's
configuration, the server's own environment (tests/core/test_chat.py has the turns themselves)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from tests.fake_provider import Reply
from tests.support.lsp import server_env, start_client


async def test_commands_are_advertised(harness):
    commands = harness.init_result.capabilities.execute_command_provider.commands
    for name in ("shiro.chat", "shiro.abort", "shiro.newSession", "shiro.status", "shiro.history"):
        assert name in commands


async def test_cancel_request_aborts_that_turn(harness):
    harness.fake.script(Reply(text="a long story " * 10, chunks=30, delay=0.05), Reply(text="next"))
    running = harness.start_chat("tell me", msg_id="chat-1")
    await harness.wait_for(lambda: any(e["type"] == "text_delta" for e in harness.events))
    harness.client.cancel_request(types.CancelParams(id="chat-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await running
    await harness.wait_for(lambda: any(e["type"] == "turn_end" for e in harness.events))
    end = next(e for e in harness.events if e["type"] == "turn_end")
    assert end["status"] == "aborted"
    result = await harness.chat("and now?")
    assert result["status"] == "completed" and result["text"] == "next"


async def test_cancel_request_of_a_queued_prompt_removes_only_it(harness):
    # Two seconds of stream after the first delta: the two prompts are queued while it runs (a
    # cold server's first response is read once the SDK is imported, so its early chunks arrive
    # together and a short stream could end before they do).
    harness.fake.script(Reply(text="first " * 40, chunks=40, delay=0.05), Reply(text="third"))
    first = harness.start_chat("one")
    await harness.wait_for(lambda: any(e["type"] == "text_delta" for e in harness.events))
    second = harness.start_chat("two", msg_id="chat-2")
    third = harness.start_chat("three")
    await harness.wait_for(lambda: sum(e["type"] == "queued" for e in harness.events) == 2)
    harness.client.cancel_request(types.CancelParams(id="chat-2"))
    with pytest.raises(JsonRpcRequestCancelled):
        await second
    results = [r if isinstance(r, dict) else r._asdict() for r in await asyncio.gather(first, third)]
    assert [r["text"] for r in results] == ["first " * 40, "third"]
    assert len(harness.fake.requests) == 2


async def test_no_api_key_is_a_clear_error(tmp_path, workspace):
    home = tmp_path / "home"
    from tests.fake_provider import FakeProvider

    h = await start_client(
        {"fake": FakeProvider(), "home": home, "root": workspace},
        "neovim",
        server_env(home, base_url=None, api_key=None),
    )
    try:
        result = await h.chat("hello?")
        assert result["status"] == "error"
        assert "OPENAI_API_KEY" in result["error"] and "shiro.baseUrl" in result["error"]
    finally:
        await h.client.shutdown_session()
        await h.client.stop()


async def test_settings_from_configuration_and_changes(harness):
    harness.fake.script(Reply(text="a"), Reply(text="b"))
    await harness.chat("first")
    assert harness.fake.requests[0].body["model"] == "gpt-5"
    harness.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"shiro": {"model": "gpt-5-mini", "agent": "deep"}})
    )
    await harness.chat("second")
    body = harness.fake.requests[1].body
    assert body["model"] == "gpt-5-mini" and "deep mode" in body["instructions"]


async def test_settings_from_workspace_configuration(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client(
        {"fake": fake, "home": home, "root": workspace},
        "visual-studio-code",
        server_env(home, fake.base_url),
        settings={"model": "from-config", "wireApi": "chat"},
    )
    try:
        fake.script(Reply(text="hi"))
        await h.chat("hello")
        assert fake.requests[0].api == "chat" and fake.requests[0].body["model"] == "from-config"
        status = await h.command("shiro.status")
        assert status["model"] == "from-config" and status["costUsd"] is None  # unknown price: null, not 0
    finally:
        await h.client.shutdown_session()
        await h.client.stop()
