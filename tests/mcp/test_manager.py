"""The MCP manager against real processes: the SDK fault server in tests/ and mcp-server-time."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import run_tool
from shiro_neko.mcp.manager import McpManager
from shiro_neko.project_settings import sha256 as file_hash
from shiro_neko.state.trust import TrustStore

from .helpers import FAULT_SERVER, fault_entry, pid_alive, pids_in, time_server

READY = 60.0  # generous: the machine is shared; nothing here asserts a time


async def never_asked(message: str, actions: list[str]) -> str | None:
    raise AssertionError(f"unexpected question: {message}")


def manager(tmp_path: Path, servers: dict[str, Any], ask: Any = never_asked) -> tuple[McpManager, Path]:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    m = McpManager(lambda: tmp_path / "home", ask)
    m.configure(servers)
    return m, root


async def ready(m: McpManager, root: Path, name: str) -> None:
    deadline = time.monotonic() + READY
    m.activate(root)
    while time.monotonic() < deadline:
        view = {v.name: v for v in m.views(root)}[name]
        if view.state != "starting":
            assert view.state == "ready", view
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never became ready")


async def call(m: McpManager, root: Path, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    tool = {t.name: t for t in m.tools(root)}[name]
    result = await run_tool(tool, DiskToolHost(root), args)
    return result.output, result.is_error


async def test_time_server_tool_is_offered_and_called(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"time": {"command": time_server(), "args": ["--local-timezone", "UTC"]}})
    try:
        await ready(m, root, "time")
        names = [t.name for t in m.tools(root)]
        assert "mcp__time__get_current_time" in names
        tool = {t.name: t for t in m.tools(root)}["mcp__time__get_current_time"]
        assert tool.parameters["type"] == "object" and "timezone" in tool.parameters["properties"]
        assert tool.approval == "command"
        output, is_error = await call(m, root, "mcp__time__get_current_time", {"timezone": "Europe/Paris"})
        assert not is_error and "Europe/Paris" in output
        output, is_error = await call(m, root, "mcp__time__get_current_time", {"timezone": "Not/AZone"})
        assert is_error and "'get_current_time' of server 'time' failed" in output
        # Checked against the server's own schema before any call: the model reads why.
        output, is_error = await call(m, root, "mcp__time__get_current_time", {"timezone": 3})
        assert is_error and output.startswith("argument 'timezone': 3 is not of type 'string'") and "no call was made" in output
        output, is_error = await call(m, root, "mcp__time__get_current_time", {})
        assert is_error and "'timezone' is a required property" in output
    finally:
        await m.stop()


async def test_results_placeholder_error_and_always_allow(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry(alwaysAllow=["echo"])})
    try:
        await ready(m, root, "f")
        tools = {t.name: t for t in m.tools(root)}
        assert tools["mcp__f__echo"].approval is None and tools["mcp__f__fail"].approval == "command"
        assert await call(m, root, "mcp__f__echo", {"text": "héllo"}) == ("héllo", False)
        output, is_error = await call(m, root, "mcp__f__picture", {})
        assert not is_error and "here is a picture" in output and "[image image/png, 72 bytes - not shown]" in output
        output, is_error = await call(m, root, "mcp__f__fail", {})
        assert is_error and output == "MCP tool 'fail' of server 'f' failed: it went wrong on purpose"
    finally:
        await m.stop()


async def test_crash_at_start_fails_with_stderr_and_restarts_after_backoff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIRO_MCP_TURN_WAIT", str(READY))  # the crash is awaited, however loaded the machine
    pidfile = tmp_path / "pids"
    m, root = manager(tmp_path, {"boom": fault_entry("--crash-at-start", "--pidfile", str(pidfile))})
    try:
        m.activate(root)
        servers = m._workspaces[root]
        servers.backoff_first = 60.0  # no clock in the test: the backoff "passes" below
        notices = await m.prepare_turn(root)
        view = m.views(root)[0]
        assert view.state == "failed"
        assert "told to crash at start" in (view.error or "")
        assert any("MCP server 'boom' failed" in n and "told to crash at start" in n for n in notices)
        assert m.tools(root) == []
        assert len(pids_in(pidfile)) == 1
        assert await m.prepare_turn(root) == []  # inside the backoff: not started again
        assert len(pids_in(pidfile)) == 1
        assert any("retried on a turn after 60 s" in n for n in notices)
        servers._retry["boom"].at = 0.0  # the backoff has passed
        notices = await m.prepare_turn(root)  # a later turn restarts it
        assert len(pids_in(pidfile)) == 2
        assert any("retried on a turn after 120 s" in n for n in notices)  # and the next wait doubles
    finally:
        await m.stop()


async def test_missing_command_is_a_clear_failure(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"nope": {"command": str(tmp_path / "no-such-server")}})
    try:
        m.activate(root)
        await m.prepare_turn(root)
        assert m.views(root)[0].error == f"command not found: {tmp_path / 'no-such-server'}"
    finally:
        await m.stop()


async def test_crash_mid_call_is_an_error_result_and_a_failed_state(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry()})
    try:
        await ready(m, root, "f")
        output, is_error = await call(m, root, "mcp__f__crash", {})
        assert is_error
        assert "MCP tool 'crash' of server 'f' failed: the server stopped during the call" in output
        assert "crashing mid-call as asked" in output  # the stderr tail
        view = m.views(root)[0]
        assert view.state == "failed" and "the server exited" in (view.error or "")
        assert m.tools(root) == []
        notices = await m.prepare_turn(root)
        assert any("MCP server 'f' failed: the server exited" in n for n in notices)
    finally:
        await m.stop()


async def test_death_while_idle_is_noticed_without_a_call(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    m, root = manager(tmp_path, {"f": fault_entry("--pidfile", str(pidfile))})
    try:
        await ready(m, root, "f")
        import os
        import signal

        os.kill(pids_in(pidfile)[0], signal.SIGKILL)
        deadline = time.monotonic() + 20
        while m.views(root)[0].state == "ready" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert m.views(root)[0].state == "failed"
    finally:
        await m.stop()


async def test_call_past_its_timeout_is_an_error_and_the_server_lives_on(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry(timeoutSeconds=1)})
    try:
        await ready(m, root, "f")
        output, is_error = await call(m, root, "mcp__f__hang", {})
        assert is_error and output == "MCP tool 'hang' of server 'f' timed out after 1 s (timeoutSeconds)"
        assert await call(m, root, "mcp__f__echo", {"text": "still here"}) == ("still here", False)
    finally:
        await m.stop()


async def test_abort_cancels_a_call_in_flight(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry()})
    try:
        await ready(m, root, "f")
        task = asyncio.ensure_future(call(m, root, "mcp__f__hang", {}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await call(m, root, "mcp__f__echo", {"text": "after abort"}) == ("after abort", False)
    finally:
        await m.stop()


async def test_invalid_schema_tool_is_left_out_with_a_notice(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry("--bad-schema")})
    try:
        await ready(m, root, "f")
        names = {t.name for t in m.tools(root)}
        assert "mcp__f__broken" not in names and "mcp__f__echo" in names
        notices = await m.prepare_turn(root)
        assert any("tool 'broken' left out: its input schema is not valid JSON Schema" in n for n in notices)
    finally:
        await m.stop()


async def test_garbage_on_stdout_does_not_break_the_session(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry("--garbage")})
    try:
        await ready(m, root, "f")
        assert await call(m, root, "mcp__f__echo", {"text": "one"}) == ("one", False)
        assert await call(m, root, "mcp__f__echo", {"text": "two"}) == ("two", False)
    finally:
        await m.stop()


async def test_slow_server_does_not_hold_the_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIRO_MCP_TURN_WAIT", "0.5")
    m, root = manager(tmp_path, {"slow": fault_entry("--slow-start", "30")})
    try:
        m.activate(root)
        notices = await m.prepare_turn(root)
        assert notices == ["MCP server 'slow' still starting; this turn goes on without their tools"]
        assert m.views(root)[0].state == "starting" and m.tools(root) == []
    finally:
        await m.stop()


async def test_env_reaches_the_server_and_secrets_stay_out_of_views(tmp_path: Path) -> None:
    secret = "sk-mcp-secret-value-123"
    m, root = manager(tmp_path, {"f": fault_entry("--crash-at-start", env={"API_TOKEN": secret})})
    try:
        m.activate(root)
        await m.prepare_turn(root)
        assert secret not in repr(m.views(root)) and secret not in repr(m._workspaces[root].connections["f"].spec)
    finally:
        await m.stop()
    m, root = manager(tmp_path, {"f": fault_entry(env={"API_TOKEN": secret})})
    try:
        await ready(m, root, "f")
        assert await call(m, root, "mcp__f__env", {"name": "API_TOKEN"}) == (secret, False)
        # The SDK passes a safe set of variables only: our own API key never reaches a server.
        assert (await call(m, root, "mcp__f__env", {"name": "OPENAI_API_KEY"}))[0] == "<unset>"
    finally:
        await m.stop()


async def test_settings_change_applies_without_a_restart(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    m, root = manager(tmp_path, {"a": fault_entry("--pidfile", str(pidfile))})
    try:
        await ready(m, root, "a")
        first = pids_in(pidfile)[0]
        m.configure({"a": fault_entry("--pidfile", str(pidfile)), "b": fault_entry()})  # a unchanged
        await ready(m, root, "b")
        assert pids_in(pidfile) == [first] and pid_alive(first)
        m.configure({"a": fault_entry("--pidfile", str(pidfile), timeoutSeconds=5)})  # a edited, b removed
        await ready(m, root, "a")
        assert len(pids_in(pidfile)) == 2
        assert [v.name for v in m.views(root)] == ["a"]
        m.configure({"a": {**fault_entry(), "enabled": False}, "bad": {"command": 3}})
        await m.prepare_turn(root)
        views = {v.name: v for v in m.views(root)}
        assert views["a"].state == "disabled" and m.tools(root) == []
        assert views["bad"].state == "failed" and "Expected `str | null`, got `int` - at `$.command`" in (views["bad"].error or "")
        deadline = time.monotonic() + 20
        while any(pid_alive(p) for p in pids_in(pidfile)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not any(pid_alive(p) for p in pids_in(pidfile))
    finally:
        await m.stop()


async def test_stop_leaves_no_process_even_when_the_server_ignores_eof_and_sigterm(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    m, root = manager(tmp_path, {
        "stubborn": fault_entry("--ignore-eof", "--ignore-term", "--pidfile", str(pidfile)),
        "plain": fault_entry("--pidfile", str(pidfile)),
    })
    await ready(m, root, "stubborn")
    await ready(m, root, "plain")
    pids = pids_in(pidfile)
    assert len(pids) == 2 and all(pid_alive(p) for p in pids)
    await m.stop()
    assert not any(pid_alive(p) for p in pids)


async def test_project_file_runs_only_once_trusted_and_asks_again_when_changed(tmp_path: Path) -> None:
    asked: list[str] = []
    answers = ["Don't trust", "Trust"]

    async def ask(message: str, actions: list[str]) -> str | None:
        asked.append(message)
        assert actions == ["Trust", "Don't trust"]
        return answers.pop(0)

    m, root = manager(tmp_path, {}, ask)
    project = root / ".mcp.json"
    project.write_text('{"mcpServers": {"proj": {"command": "%s", "args": ["%s"], "env": {"K": "secret-in-project"}}}}' % (sys.executable, FAULT_SERVER))
    try:
        m.activate(root)
        await asyncio.sleep(0.2)
        assert len(asked) == 1 and "proj" in asked[0]
        view = m.views(root)[0]
        assert (view.source, view.state) == ("project", "untrusted")
        assert "declined" in (view.error or "")
        store = TrustStore(tmp_path / "home")
        assert store.lookup(m._workspaces[root].key, root)(".mcp.json", file_hash(project.read_bytes())) == "declined"
        await m.prepare_turn(root)
        assert len(asked) == 1  # remembered
        project.write_text(project.read_text().replace("proj", "proj2"))
        await m.prepare_turn(root)
        await asyncio.sleep(0.2)
        assert len(asked) == 2  # the file changed: asked again, and trusted this time
        await ready(m, root, "proj2")
        record = (tmp_path / "home" / "trust.json").read_text()
        assert "secret-in-project" not in record and file_hash(project.read_bytes()) in record
    finally:
        await m.stop()


async def test_a_failing_server_is_one_short_notice_per_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 26: a broken server's notice came twice in one turn (the failure before the turn and
    # the restart's within it), each with the whole stderr of the server (npm's dozens of lines).
    monkeypatch.setenv("SHIRO_MCP_TURN_WAIT", str(READY))
    noisy = "for i in $(seq 1 30); do echo npm ERR! line $i >&2; done; exit 1"
    m, root = manager(tmp_path, {"broken": {"command": "/bin/sh", "args": ["-c", noisy]}})
    try:
        m.activate(root)
        servers = m._workspaces[root]
        servers.backoff_first = 0.0  # the restart is due at the next turn
        deadline = time.monotonic() + READY
        while m.views(root)[0].state != "failed" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        notices = await m.prepare_turn(root)  # restarts it; it fails again within the turn
        failed = [n for n in notices if "MCP server 'broken' failed" in n]
        assert len(failed) == 1, notices
        assert "line 30" in failed[0] and "line 27" not in failed[0] and "/mcp shows more" in failed[0]
        assert "line 19" in (m.views(root)[0].error or "")  # /mcp keeps the whole tail
    finally:
        await m.stop()


async def test_a_malformed_project_file_is_a_notice_once(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {})
    (root / ".mcp.json").write_text('{"mcpServers": {')
    try:
        m.activate(root)
        notices = await m.prepare_turn(root)
        assert any(".mcp.json" in n and "not valid JSON" in n for n in notices), notices
        assert not any(".mcp.json" in n for n in await m.prepare_turn(root))  # said once
        assert any(".mcp.json" in (v.error or "") for v in m.views(root))  # /mcp still shows it
    finally:
        await m.stop()


async def test_a_crashed_servers_tools_are_not_listed_as_offered(tmp_path: Path) -> None:
    from shiro_neko.mcp.manager import status_of

    m, root = manager(tmp_path, {"f": fault_entry()})
    try:
        await ready(m, root, "f")
        [before] = status_of(m, root).servers
        assert before.tools and all(t.modelName and t.modelName.startswith("mcp__f__") for t in before.tools)
        await call(m, root, "mcp__f__crash", {})
        [after] = status_of(m, root).servers
        assert after.state == "failed" and after.tools == []
    finally:
        await m.stop()
