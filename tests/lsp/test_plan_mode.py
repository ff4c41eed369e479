"""The plan mode attack, through the real server over stdio: a plan-mode turn in which the scripted
model calls every tool that can write (each tool the act-mode request offered, the MCP server's
writing tool, names it was never offered, and commands that write: `touch`, `echo >`, `rm`, a
widened sandbox), under `approvals: auto` with every question answered yes, on both wire APIs.
No file of the workspace changes (a full snapshot, bytes and modes, before and after), and every
refusal says plan mode is on. Without bubblewrap (a broken `bwrap` first on PATH) every command is
asked, and a yes is for that call only. docs/modes.md says why this holds."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.fake_provider import Call, RecordedRequest, Reply
from tests.mcp.helpers import fault_entry
from tests.mcp.test_mcp_lsp import close, launch, wait_ready
from tests.support.lsp import EDIT_FILE_MODEL

# Arguments that would change the workspace, for the core tools that take a path or content.
WRITES: dict[str, dict[str, Any]] = {
    "edit_file": {"path": "hello.py", "old_text": "hello", "new_text": "pwned"},
    "write_file": {"path": "new.txt", "content": "pwned\n"},
    "apply_patch": {"patch": "*** Begin Patch\n*** Add File: patched.txt\n+pwned\n*** End Patch\n"},
    "run_command": {"command": "touch x"},
}
COMMANDS = ["touch x", "echo pwned > f", "echo pwned >> hello.py", "rm -f hello.py", "mkdir made",
            "cd .. && touch escaped", "git init -q ."]


def snapshot(root: Path) -> dict[str, tuple[str, bytes | None, int]]:
    """Every path under `root` (the folder's parent too: a write beside it counts): kind, bytes, mode."""
    out: dict[str, tuple[str, bytes | None, int]] = {}
    for base, dirs, files in os.walk(root.parent):
        for name in dirs + files:
            path = Path(base) / name
            if "home" in path.relative_to(root.parent).parts[:1]:
                continue  # the server's own state (records, checkpoints, logs) lives there
            info = path.lstat()
            kind = "dir" if stat.S_ISDIR(info.st_mode) else "link" if stat.S_ISLNK(info.st_mode) else "file"
            out[str(path)] = (kind, path.read_bytes() if kind == "file" else None, stat.S_IMODE(info.st_mode))
    return out


def tool_names(req: RecordedRequest) -> list[str]:
    return [t.get("name") or t.get("function", {}).get("name") for t in req.body.get("tools") or []]


def attack_calls(act_tools: list[str], root: Path) -> list[Call]:
    calls = [Call(name, WRITES.get(name, {"path": "hello.py", "text": "pwned"})) for name in act_tools]
    calls += [Call("run_command", {"command": c}) for c in COMMANDS]
    calls += [
        Call("run_command", {"command": "touch widened", "write_paths": ["."], "reason": "need it"}),
        Call("run_command", {"command": "touch bg-made; sleep 0.2", "background": True}),
        Call("mcp__f__write", {"path": str(root / "mcp.txt"), "text": "pwned"}),
        Call("mcp__f__write", {"path": str(root / "hello.py"), "text": "pwned"}),
        Call("apply_patch", WRITES["apply_patch"]),
        Call("write_file", WRITES["write_file"]),
        Call("notebook_edit", {"path": "n.ipynb"}),  # a name never offered
    ]
    return calls


async def _plan_attack(tmp_path: Path, fake: Any, workspace: Path, wire: str, **env: str) -> tuple[Any, list[dict[str, Any]]]:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "keep.txt").write_text("keep\n")
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto", "wireApi": wire,
                                                 "mcpServers": {"f": fault_entry()}}, SHIRO_MODEL=EDIT_FILE_MODEL, **env)
    await wait_ready(h, "f")
    fake.script(Reply(text="act mode answer"))
    await h.chat("hello")
    act_tools = tool_names(fake.main_requests[-1])
    assert {"edit_file", "write_file", "run_command", "mcp__f__write", "mcp__f__peek"} <= set(act_tools)
    assert (await h.command("shiro.setMode", {"mode": "plan"}))["mode"] == "plan"
    before = snapshot(workspace)
    calls = attack_calls(act_tools, workspace)
    fake.script(Reply(calls=calls), Reply(text="Plan: nothing changed."))
    h.answers = ["Allow"] * 100  # a user who says yes to everything
    result = await h.chat("change everything")
    assert result["status"] == "completed", result
    assert snapshot(workspace) == before
    offered = set(tool_names(fake.main_requests[-2]))
    assert not offered & {"edit_file", "write_file", "apply_patch", "mcp__f__write"}
    assert {"read_file", "run_command", "todo_write", "mcp__f__peek"} <= offered
    results = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
    assert len(results) == len(calls)
    for call, res in zip(calls, results):
        if call.name not in offered:
            assert res["isError"] and "plan mode is on" in res["output"], (call.name, res)
    assert (await h.command("shiro.status"))["mode"] == "plan"
    return h, [{"call": c, "result": r} for c, r in zip(calls, results)]


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_no_file_changes_in_a_plan_mode_turn_whatever_the_model_calls(tmp_path, fake, workspace, wire):
    h, pairs = await _plan_attack(tmp_path, fake, workspace, wire)
    try:
        # The read-only sandbox holds: only web_fetch (read-only, its host not allowed) was asked about.
        assert [q for q in h.asked if "fetch" not in q] == []
        for pair in pairs:
            call, res = pair["call"], pair["result"]
            if call.name == "run_command" and isinstance(call.arguments, dict) and call.arguments.get("write_paths"):
                assert res["isError"] and "plan mode is on" in res["output"]
            elif call.name == "run_command" and isinstance(call.arguments, dict) and call.arguments["command"] in COMMANDS:
                # It ran, in the read-only sandbox (offered, not refused); what it wrote did not reach
                # the disk (the snapshot). `cd .. && touch` succeeds there: in the sandbox's private /tmp.
                assert res["output"].startswith("exit code"), res
                if call.arguments["command"] in ("touch x", "echo pwned > f", "rm -f hello.py"):
                    assert "read-only file system" in res["output"].lower(), res
    finally:
        await close(h)


async def test_without_a_sandbox_every_command_is_asked_and_a_yes_holds_once(tmp_path, fake, workspace):
    broken = tmp_path / "bin"
    broken.mkdir()
    (broken / "bwrap").write_text("#!/bin/sh\necho 'bwrap: no user namespaces here' >&2\nexit 1\n")
    (broken / "bwrap").chmod(0o755)
    h = await launch(tmp_path, fake, workspace, {"approvals": "auto", "sandbox": "off"}, SHIRO_MODEL=EDIT_FILE_MODEL,
                     PATH=f"{broken}:{os.environ['PATH']}")
    try:
        await h.command("shiro.setMode", {"mode": "plan"})
        before = snapshot(workspace)
        fake.script(Reply(calls=[Call("run_command", {"command": "touch x"}),
                                 Call("run_command", {"command": "echo looked"}),
                                 Call("run_command", {"command": "echo looked"})]),
                    Reply(text="planned"))
        h.answers = ["Deny", "Always allow", "Deny"]
        result = await h.chat("look")
        results = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert len(h.asked) == 3  # under approvals "auto", and "Always allow" did not cover the same command
        assert all("plan mode" in q for q in h.asked), h.asked
        assert results[0]["isError"] and "denied" in results[0]["output"]
        assert "looked" in results[1]["output"] and results[2]["isError"]
        assert snapshot(workspace) == before
    finally:
        await close(h)
