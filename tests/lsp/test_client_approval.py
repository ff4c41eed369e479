"""`shiro/approve` (docs/protocol.md "Approvals"): sent to clients that advertise it, with
the edit's preview; `window/showMessageRequest` to the rest; cancelled when the turn is aborted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from shiro_neko.protocol import plain
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client, stop

ADVERTISE = {"shiro": {"approvals": True}}


async def _client(tmp_path, fake, workspace, answers: list[Any], *, experimental=ADVERTISE):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL), experimental=experimental)
    h.approvals: list[dict[str, Any]] = []  # type: ignore[attr-defined]
    h.cancelled = asyncio.Event()  # type: ignore[attr-defined]

    @h.client.feature("shiro/approve")
    async def on_approve(params: Any) -> Any:
        h.approvals.append(plain(params))  # type: ignore[attr-defined]
        answer = answers.pop(0) if answers else {"decision": "allow"}
        if answer == "hang":
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                h.cancelled.set()  # type: ignore[attr-defined]
                raise
        return answer

    return h


async def test_edit_is_asked_in_the_client_with_its_preview(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, [{"decision": "allow"}])
    try:
        fake.script(Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "shiro"}, "call_e1")]),
                    Reply(text="edited"))
        result = await h.chat("edit it")
        assert result["status"] == "completed"
        assert h.asked == []  # no dialog: the client asked in its own UI
        [ask] = h.approvals
        assert ask["toolCallId"] == "call_e1" and ask["toolName"] == "edit_file"
        assert ask["turnId"] == result["turnId"] and ask["sessionId"] == result["sessionId"]
        assert ask["title"] == "edit hello.py"
        assert ask["input"] == {"path": "hello.py", "old_text": "hello", "new_text": "shiro"}
        assert ask["preview"] == {"path": str(workspace / "hello.py"), "newText": "print('shiro')\n"}
        assert (workspace / "hello.py").read_text() == "print('shiro')\n"
    finally:
        await stop(h)


@pytest.mark.parametrize("answer", [{"decision": "deny"}, None, {"decision": "sure"}])
async def test_deny_null_or_unknown_answer_leaves_the_file(tmp_path, fake, workspace, answer):
    h = await _client(tmp_path, fake, workspace, [answer])
    try:
        fake.script(Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x"})]), Reply(text="ok"))
        result = await h.chat("write")
        [tool] = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert tool["isError"] and "denied" in tool["output"]
        assert h.approvals[0]["preview"] == {"path": str(workspace / "new.txt"), "newText": "x"}
        assert not (workspace / "new.txt").exists()
    finally:
        await stop(h)


async def test_command_has_no_preview_and_always_sticks(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, [{"decision": "always"}])
    try:
        fake.script(Reply(calls=[Call("run_command", {"command": "echo one"})]),
                    Reply(calls=[Call("run_command", {"command": "echo one"})]), Reply(text="done"))
        result = await h.chat("run")
        assert len(h.approvals) == 1 and "preview" not in h.approvals[0]  # "always": the same command again
        outputs = [e["output"] for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert "one" in outputs[0] and "one" in outputs[1]
    finally:
        await stop(h)


async def test_abort_cancels_the_open_request(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, ["hang"])
    try:
        fake.script(Reply(calls=[Call("run_command", {"command": "echo never"})]))
        running = h.start_chat("run")
        await h.wait_for(lambda: len(h.approvals) == 1)
        await h.command("shiro.abort", {})
        await asyncio.wait_for(h.cancelled.wait(), 10)  # the client got $/cancelRequest
        result = plain(await running)
        assert result["status"] == "aborted"
    finally:
        await stop(h)


async def test_clients_without_the_capability_get_the_dialog(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, [], experimental=None)
    try:
        fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"})]), Reply(text="ok"))
        await h.chat("run")
        assert h.approvals == [] and len(h.asked) == 1
    finally:
        await stop(h)


@pytest.mark.parametrize("answer, decision", [({"decision": "always"}, "trusted"), ({"decision": "deny"}, "declined"), (None, None)])
async def test_workspace_trust_is_asked_as_shiro_approve_with_tool_name_trust(tmp_path, fake, workspace, answer, decision):
    """An editor's workspace-level MCP servers (VS Code sends them as `workspaceMcpServers`) are
    project servers: asked about as `shiro/approve` with `toolName: "trust"`; always trusts,
    deny is remembered, null is "not now" (nothing remembered)."""
    import json
    import sys

    marker = tmp_path / "PWNED"
    server = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').write('ran')"]}
    h = await _client(tmp_path, fake, workspace, [answer])
    try:
        h.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"shiro": {"workspaceMcpServers": {"pwn": server}}}))
        await h.command("shiro.newSession")
        await h.wait_for(lambda: h.approvals, timeout=30)
        [ask] = h.approvals
        assert ask["toolName"] == "trust" and "mcpServers.pwn" in ask["title"]
        assert h.asked == []
        await asyncio.sleep(0.5)
        record = tmp_path / "home" / "trust.json"
        files = next(iter(json.loads(record.read_text())["workspaces"].values()))["files"] if record.exists() else {}
        assert {n: f["decision"] for n, f in files.items()} == ({"workspace settings: shiro.mcpServers": decision} if decision else {})
        if decision == "trusted":
            await h.wait_for(lambda: marker.exists(), timeout=30)  # now it runs
    finally:
        await stop(h)
    if decision != "trusted":
        assert not marker.exists()
