"""Permission rules through the real server (issue 39, docs/protocol.md "Permission rules"):
deny over allow, compound commands and `$(…)`, "Always allow" writing the command's prefix rule
to the scope the user picked (the file's content checked), `shiro.permissions` listing rules by
scope and `shiro.removePermission` removing them."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.protocol import plain
from shiro_neko.state.paths import workspace_key
from tests.fake_provider import Call, Reply
from tests.support.lsp import Harness, server_env, start_client, stop

SETTINGS = {"sandbox": "off"}  # bubblewrap may not work here: a command would ask for that reason


async def _client(tmp_path: Path, fake: Any, workspace: Path, answers: list[Any],
                  settings: dict[str, Any] | None = None) -> Harness:
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url), experimental={"shiro": {"approvals": True}},
                           settings={**SETTINGS, **(settings or {})})
    h.approvals = []  # type: ignore[attr-defined]

    @h.client.feature("shiro/approve")
    async def on_approve(params: Any) -> Any:
        h.approvals.append(plain(params))  # type: ignore[attr-defined]
        return answers.pop(0) if answers else {"decision": "deny"}

    return h


_ids = itertools.count()


def _run(*commands: str) -> Reply:
    # Call ids unique across replies: a step's results are matched to its calls by id.
    return Reply(calls=[Call("run_command", {"command": c}, f"c{next(_ids)}") for c in commands])


def _results(h: Harness, result: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]


def _asked(h: Harness) -> list[str]:
    return [a["input"]["command"] for a in h.approvals]  # type: ignore[attr-defined]


async def test_deny_beats_allow_in_every_part_of_a_compound_command(tmp_path, fake, workspace):
    rules = {"allow": ["Bash(echo:*)", "Bash(rm:*)"], "deny": ["Bash(rm:*)"]}
    h = await _client(tmp_path, fake, workspace, [], {"approvals": "ask", "permissions": rules})
    try:
        fake.script(_run("echo $(rm -f hello.py)", "echo ok && rm -f hello.py", "echo `rm -f hello.py`",
                         "echo fine"), Reply(text="ok"))
        result = await h.chat("clean")
        *denied, fine = _results(h, result)
        assert [d["isError"] and "Bash(rm:*)" in d["output"] for d in denied] == [True, True, True]
        assert not fine["isError"] and "fine" in fine["output"]  # allowed by Bash(echo:*): not asked
        assert h.approvals == []  # type: ignore[attr-defined]
        assert (workspace / "hello.py").exists()
    finally:
        await stop(h)


async def test_always_allow_for_the_workspace_writes_a_prefix_rule_that_outlives_the_server(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await _client(tmp_path, fake, workspace, [{"decision": "always", "scope": "workspace"}])
    try:
        fake.script(_run("echo one"), _run("echo one two", "echo one; touch evil.txt"), Reply(text="ok"))
        result = await h.chat("run")
        assert _asked(h) == ["echo one", "echo one; touch evil.txt"]
        first, again, compound = _results(h, result)
        assert not first["isError"] and not again["isError"] and compound["isError"]
        assert not (workspace / "evil.txt").exists()
        saved = json.loads((home / "permissions.json").read_text())
        assert saved["workspaces"][workspace_key(workspace)]["allow"] == ["Bash(echo one:*)"]
        listed = (await h.command("shiro.permissions", {}))["rules"]
        assert {"rule": "Bash(echo one:*)", "decision": "allow", "scope": "workspace"} in listed
        assert not any(r["scope"] == "session" for r in listed)  # written to the workspace, not kept twice
        assert any(e["type"] == "notice" and "Bash(echo one:*)" in e["message"] for e in h.of_turn(result["turnId"]))
    finally:
        await stop(h)

    # Another server, another session: the rule holds there; removed, the command is asked again.
    h = await _client(tmp_path, fake, workspace, [{"decision": "deny"}])
    try:
        fake.script(_run("echo one three"), Reply(text="ok"))
        await h.chat("again")
        assert h.approvals == []  # type: ignore[attr-defined]
        removed = await h.command("shiro.removePermission", {"rule": "Bash(echo one:*)", "scope": "workspace"})
        assert removed == {"removed": True}
        assert json.loads((home / "permissions.json").read_text())["workspaces"][workspace_key(workspace)].get("allow", []) == []
        assert await h.command("shiro.removePermission", {"rule": "Bash(echo one:*)", "scope": "workspace"}) == {"removed": False}
        fake.script(_run("echo one four"), Reply(text="ok"))
        await h.chat("once more")
        assert _asked(h) == ["echo one four"]
    finally:
        await stop(h)


async def test_always_allow_for_the_user_keeps_the_settings_file_s_other_keys(tmp_path, fake, workspace):
    user_file = tmp_path / "user-settings.json"  # server_env's SHIRO_NEKO_CONFIG
    user_file.write_text(json.dumps({"model": "m", "permissions": {"deny": ["Bash(rm:*)"]}}))
    h = await _client(tmp_path, fake, workspace, [{"decision": "always", "scope": "user"}])
    try:
        fake.script(_run("npm test -- -k x"), Reply(text="ok"))
        await h.chat("test")
        assert json.loads(user_file.read_text()) == {
            "model": "m", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(npm test:*)"]}}
        listed = (await h.command("shiro.permissions", {}))["rules"]
        assert [r for r in listed if r["scope"] == "user"] == [
            {"rule": "Bash(npm test:*)", "decision": "allow", "scope": "user"},
            {"rule": "Bash(rm:*)", "decision": "deny", "scope": "user"}]
        # The user file's deny rule applies in an editor too (the server reads the file itself).
        fake.script(_run("rm -f hello.py"), Reply(text="ok"))
        result = await h.chat("rm")
        [denied] = _results(h, result)
        assert denied["isError"] and "Bash(rm:*)" in denied["output"] and (workspace / "hello.py").exists()
        assert await h.command("shiro.removePermission", {"rule": "Bash(npm test:*)", "scope": "user"}) == {"removed": True}
        assert json.loads(user_file.read_text()) == {"model": "m", "permissions": {"deny": ["Bash(rm:*)"], "allow": []}}
    finally:
        await stop(h)


async def test_a_session_rule_is_listed_and_removed(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, [{"decision": "always"}, {"decision": "deny"}],
                      {"permissions": {"allow": ["Bash(ls:*)"]}})
    try:
        fake.script(_run("echo one"), Reply(text="ok"))
        result = await h.chat("run")
        listed = (await h.command("shiro.permissions", {"sessionId": result["sessionId"]}))["rules"]
        assert {"rule": "Bash(echo one:*)", "decision": "allow", "scope": "session"} in listed
        assert {"rule": "Bash(ls:*)", "decision": "allow", "scope": "user"} in listed  # the editor's setting
        with pytest.raises(Exception, match="editor's `shiro.permissions` setting"):  # only the editor can drop it
            await h.command("shiro.removePermission", {"rule": "Bash(ls:*)", "scope": "user"})
        with pytest.raises(Exception, match="edit that file"):
            await h.command("shiro.removePermission", {"rule": "Bash(ls:*)", "scope": "project"})
        assert await h.command("shiro.removePermission", {"rule": "Bash(echo one:*)", "scope": "session"}) == {"removed": True}
        fake.script(_run("echo one"), Reply(text="ok"))
        await asyncio.wait_for(h.chat("again"), 30)
        assert _asked(h) == ["echo one", "echo one"]  # the rule gone, the same command is asked again
    finally:
        await stop(h)


async def test_always_for_the_folder_on_a_call_no_rule_describes_says_it_is_for_the_session(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, [{"decision": "always", "scope": "workspace"}])
    try:
        fake.script(_run("echo hi > out.txt"), _run("echo hi > out.txt"), Reply(text="ok"))
        result = await h.chat("write")
        assert _asked(h) == ["echo hi > out.txt"]  # the same call again: allowed for the session
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert any("for this session only" in n for n in notices), notices
        assert not (tmp_path / "home" / "permissions.json").exists()
    finally:
        await stop(h)
