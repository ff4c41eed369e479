"""MCP end to end: the real server over stdio (pytest-lsp), the fake provider, real MCP servers:
what needs the editor (dialogs, settings pushed by the client, the server's log and its process
tree). A tool call, its failures and its abort: tests/mcp/test_mcp_service.py, in-process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.fake_provider import Call, Reply
from tests.support.lsp import Harness, server_env, start_client

from .helpers import FAULT_SERVER, descendants, fault_entry, pid_alive, pids_in, time_server

READY = 60.0


async def launch(tmp_path: Path, fake: Any, workspace: Path, settings: dict[str, Any], capabilities: str = "neovim",
                 cold: bool = False, **env: str) -> Harness:
    home = tmp_path / "home"
    env.setdefault("SHIRO_MCP_TURN_WAIT", str(READY))  # a loaded machine must not turn a start into a notice
    return await start_client(
        {"fake": fake, "home": home, "root": workspace}, capabilities, server_env(home, fake.base_url, **env),
        init_options=settings, cold=cold,
    )


async def servers(h: Harness) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in (await h.command("shiro.mcp"))["servers"]}


async def wait_ready(h: Harness, *names: str, transient: tuple[str, ...] = ("starting",)) -> dict[str, dict[str, Any]]:
    deadline = asyncio.get_running_loop().time() + READY
    while True:
        seen = await servers(h)
        if all(seen.get(n, {}).get("state") not in (None, *transient) for n in names):
            for n in names:
                assert seen[n]["state"] == "ready", seen[n]
            return seen
        assert asyncio.get_running_loop().time() < deadline, seen
        await asyncio.sleep(0.1)


def outputs(request: Any) -> list[str]:
    return [i["output"] for i in request.body["input"] if i.get("type") == "function_call_output"]


def tool_results(h: Harness, turn_id: str) -> list[dict[str, Any]]:
    return [e for e in h.of_turn(turn_id) if e["type"] == "tool_result"]


async def close(h: Harness) -> None:
    await h.client.shutdown_session()
    await h.client.stop()


async def test_approvals_ask_always_allow_and_server_always_allow(tmp_path, fake, workspace):
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto-edit", "mcpServers": {
        "f": fault_entry(), "g": fault_entry(alwaysAllow=["echo"])}})
    try:
        await wait_ready(h, "f", "g")
        h.answers = ["Deny", "Always allow"]
        fake.script(
            Reply(calls=[Call("mcp__f__echo", {"text": "one"})]),
            Reply(calls=[Call("mcp__f__echo", {"text": "two"})]),
            # Always allow covers the exact call (docs/mcp.md "Approvals"): the same call again.
            Reply(calls=[Call("mcp__f__echo", {"text": "two"}), Call("mcp__g__echo", {"text": "four"})]),
            Reply(text="done"),
        )
        result = await h.chat("echo things")
        got = [(e["output"], e["isError"]) for e in tool_results(h, result["turnId"])]
        assert got[0][1] and "denied" in got[0][0]
        assert got[1:] == [("two", False), ("two", False), ("four", False)]
        assert len(h.asked) == 2 and "call the MCP tool 'echo' of server 'f'" in h.asked[0]
    finally:
        await close(h)


async def test_settings_change_applies_without_a_server_restart(tmp_path, fake, workspace):
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto"})
    try:
        await h.command("shiro.newSession")
        assert await servers(h) == {}
        h.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"shiro": {"approvals": "auto", "mcpServers": {"f": fault_entry()}}}))
        await wait_ready(h, "f")
        h.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"shiro": {"approvals": "auto", "mcpServers": {"f": {**fault_entry(), "enabled": False}}}}))
        await h.wait_for(lambda: True)
        deadline = asyncio.get_running_loop().time() + 20
        while (await servers(h))["f"]["state"] != "disabled":
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.1)
    finally:
        await close(h)


async def test_project_file_is_asked_about_and_trusted(tmp_path, fake, workspace):
    (workspace / ".mcp.json").write_text(
        '{"mcpServers": {"proj": {"command": "%s", "args": ["%s"], "env": {"TOKEN": "project-secret-42"}}}}'
        % (sys.executable, FAULT_SERVER))
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto"}, capabilities="visual-studio-code")
    h.answers = ["Trust"]
    try:
        await h.command("shiro.newSession")
        seen = await wait_ready(h, "proj", transient=("starting", "untrusted"))
        assert seen["proj"]["source"] == "project"
        assert len(h.asked) == 1 and "proj" in h.asked[0] and ".mcp.json" in h.asked[0]
        trust = (h.home / "trust.json").read_bytes()
        assert b"project-secret-42" not in trust
    finally:
        await close(h)
    # Remembered: a new server on the same workspace starts it without asking.
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto"})
    try:
        await h.command("shiro.newSession")
        await wait_ready(h, "proj")
        assert h.asked == []
    finally:
        await close(h)


async def test_secrets_never_reach_notifications_files_or_logs(tmp_path, fake, workspace, capfd):
    secret, header = "env-secret-value-9876", "header-secret-value-5432"
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto", "mcpServers": {
        "f": fault_entry(env={"API_TOKEN": secret}),
        "dead": fault_entry("--crash-at-start", env={"API_TOKEN": secret}),
        "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": header}}}}, SHIRO_LOG="DEBUG")
    try:
        await wait_ready(h, "f")
        fake.script(Reply(calls=[Call("mcp__f__echo", {"text": "hi"})]), Reply(text="ok"))
        await h.chat("hi")
        status = repr(await servers(h))
        assert secret not in status and header not in status
    finally:
        await close(h)
    for text in (repr(h.events), repr(h.statuses), repr([m.message for m in h.client.log_messages])):
        assert secret not in text and header not in text
    for path in h.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret.encode() not in data and header.encode() not in data, path
    err = capfd.readouterr().err
    leaks = [line[:200] for line in err.splitlines() if secret in line or header in line]
    assert not leaks, leaks
    assert secret not in err and header not in err


async def test_no_mcp_process_outlives_the_server(tmp_path, fake, workspace):
    pidfile = tmp_path / "pids"
    entries = {
        "stubborn": fault_entry("--ignore-eof", "--ignore-term", "--pidfile", str(pidfile)),
        "plain": fault_entry("--pidfile", str(pidfile)),
        "time": {"command": time_server()},
    }
    for ending in ("shutdown", "closed pipe"):
        h = await launch(tmp_path, fake, workspace, {"mcpServers": entries}, cold=True)  # its process tree is read
        await wait_ready(h, "stubborn", "plain", "time")
        server = h.client._server
        children = descendants(server.pid)
        assert len(children) >= 3 and set(pids_in(pidfile)) <= set(children)
        if ending == "shutdown":
            await close(h)
        else:
            server.stdin.close()
            await asyncio.wait_for(server.wait(), timeout=30)
            await h.client.stop()
        for _ in range(100):
            if not any(pid_alive(p) for p in children):
                break
            await asyncio.sleep(0.1)
        assert not [p for p in children if pid_alive(p)], f"left behind after {ending}"
        os.unlink(pidfile)
