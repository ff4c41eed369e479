"""Hooks through the real server (docs/extending.md): Claude Code's settings shape and JSON on
stdin and stdout. A PreToolUse hook that denies stops the call with its reason; one that times
out (or fails) is a notice and the call is put to the user, even under `approvals: auto`; one
that allows skips the question; UserPromptSubmit blocks or adds context; PostToolUse and Stop
talk to the model. tests/clients/test_trust_terminal.py has the untrusted project's hook."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, start_server, stop


def script(tmp_path: Path, name: str, body: str) -> str:
    """A hook script (Python, so the test needs no jq); returns its command line."""
    path = tmp_path / f"{name}.py"
    path.write_text(body)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def hooks(event: str, command: str, matcher: str | None = None, **hook: object) -> dict:
    entry: dict = {"hooks": [{"type": "command", "command": command, **hook}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return {event: [entry]}


def results(h) -> list[dict]:
    return [e for e in h.events if e["type"] == "tool_result"]


def notices(h) -> list[str]:
    return [e["message"] for e in h.events if e["type"] == "notice"]


async def test_a_pre_tool_use_hook_that_denies_stops_the_call_with_its_reason(tmp_path, fake, workspace):
    seen = tmp_path / "seen.json"
    deny = script(tmp_path, "deny", f"""
import json, sys
data = json.load(sys.stdin)
open({str(seen)!r}, "w").write(json.dumps(data))
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "deny",
                  "permissionDecisionReason": "no writes to notes.txt on Fridays"}}}}))
""")
    fake.script(Reply(calls=[Call("write_file", {"path": "notes.txt", "content": "hi"})]), Reply(text="ok"))
    h = await start_server(tmp_path, fake, workspace,
                           settings={"hooks": hooks("PreToolUse", deny, "Edit|Write"), "approvals": "auto", "model": EDIT_FILE_MODEL})
    try:
        assert (await h.chat("write it"))["status"] == "completed"
        result = results(h)[0]
        assert result["isError"] and "denied by a PreToolUse hook: no writes to notes.txt on Fridays" in result["output"]
        assert not (workspace / "notes.txt").exists()
        assert "no writes to notes.txt on Fridays" in json.dumps(fake.requests[-1].body)
        data = json.loads(seen.read_text())
        assert data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "Write"
        assert data["tool_input"]["file_path"] == str(workspace / "notes.txt") and data["tool_input"]["content"] == "hi"
        assert data["cwd"] == str(workspace) and data["permission_mode"] == "bypassPermissions" and data["tool_use_id"]
        assert h.asked == []
    finally:
        await stop(h)


async def test_exit_code_2_denies_with_stderr_and_a_matcher_leaves_other_tools_alone(tmp_path, fake, workspace):
    block = script(tmp_path, "block", "import sys\nsys.stderr.write('rm is not allowed here')\nsys.exit(2)\n")
    fake.script(Reply(calls=[Call("run_command", {"command": "touch ran.txt"}), Call("read_file", {"path": "hello.py"})]),
                Reply(text="ok"))
    h = await start_server(tmp_path, fake, workspace, settings={"hooks": hooks("PreToolUse", block, "Bash"), "approvals": "auto"})
    try:
        await h.chat("go")
        bash, read = results(h)
        assert bash["isError"] and "denied by a PreToolUse hook: rm is not allowed here" in bash["output"]
        assert not (workspace / "ran.txt").exists()
        assert not read["isError"] and "hello" in read["output"]
    finally:
        await stop(h)


async def test_a_hook_that_times_out_is_a_notice_and_the_call_is_asked(tmp_path, fake, workspace):
    slow = script(tmp_path, "slow", "import time\ntime.sleep(60)\n")
    fake.script(Reply(calls=[Call("write_file", {"path": "out.txt", "content": "x"})]), Reply(text="ok"))
    h = await start_server(tmp_path, fake, workspace, settings={
        "hooks": hooks("PreToolUse", slow, timeout=1), "approvals": "auto", "model": EDIT_FILE_MODEL})
    h.answers = ["Deny"]
    try:
        await h.chat("write")
        assert any("PreToolUse hook" in n and "timed out after 1 s" in n for n in notices(h)), notices(h)
        assert len(h.asked) == 1 and "a PreToolUse hook failed" in h.asked[0]  # asked under `auto`
        assert not (workspace / "out.txt").exists()
    finally:
        await stop(h)


async def test_a_hook_that_crashes_is_a_notice_and_the_call_is_asked(tmp_path, fake, workspace):
    fake.script(Reply(calls=[Call("write_file", {"path": "out.txt", "content": "x"})]), Reply(text="ok"))
    h = await start_server(tmp_path, fake, workspace, settings={
        "hooks": hooks("PreToolUse", "echo broken >&2; exit 7"), "approvals": "auto", "model": EDIT_FILE_MODEL})
    h.answers = ["Allow"]
    try:
        await h.chat("write")
        assert any("exited with code 7: broken" in n for n in notices(h)), notices(h)
        assert len(h.asked) == 1 and not results(h)[0]["isError"] and h.edits  # allowed by the user: written
    finally:
        await stop(h)


async def test_allow_skips_the_question(tmp_path, fake, workspace):
    allow = script(tmp_path, "allow", 'import json\nprint(json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}}))\n')
    fake.script(Reply(calls=[Call("write_file", {"path": "out.txt", "content": "y"})]), Reply(text="ok"),
                Reply(calls=[Call("write_file", {"path": "out2.txt", "content": "z"})]), Reply(text="ok"))
    h = await start_server(tmp_path, fake, workspace, settings={"hooks": hooks("PreToolUse", allow, "Write"), "model": EDIT_FILE_MODEL})
    h.answers = ["Deny"]
    try:
        await h.chat("write")
        assert h.asked == [] and not results(h)[0]["isError"] and h.edits
        # Without the hook (the setting replaced whole), the same call is asked again.
        from lsprotocol import types

        h.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"shiro": {"hooks": {}}}))
        await h.chat("again")
        assert len(h.asked) == 1 and results(h)[1]["isError"] and "denied" in results(h)[1]["output"]
    finally:
        await stop(h)


async def test_user_prompt_submit_blocks_or_adds_context_and_post_tool_use_and_stop_talk_to_the_model(tmp_path, fake, workspace):
    prompt_hook = script(tmp_path, "prompt", """
import json, sys
data = json.load(sys.stdin)
if "secret" in data["prompt"]:
    print(json.dumps({"decision": "block", "reason": "prompts must not hold secrets"}))
else:
    print("CONTEXT-FROM-HOOK for " + data["prompt"])
""")
    post = script(tmp_path, "post", 'import json\nprint(json.dumps({"decision": "block", "reason": "run the linter next"}))\n')
    marker = tmp_path / "stopped"
    stop_hook = script(tmp_path, "stop", f"""
import json, os, sys
data = json.load(sys.stdin)
if not data["stop_hook_active"] and not os.path.exists({str(marker)!r}):
    open({str(marker)!r}, "w").write("1")
    sys.stderr.write("tests are not run yet")
    sys.exit(2)
""")
    settings = {"hooks": {**hooks("UserPromptSubmit", prompt_hook), **hooks("PostToolUse", post, "Read"), **hooks("Stop", stop_hook)}}
    fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"})]), Reply(text="first"), Reply(text="after stop"))
    h = await start_server(tmp_path, fake, workspace, settings=settings)
    try:
        blocked = await h.chat("my secret is 42")
        assert blocked["status"] == "error" and "prompts must not hold secrets" in blocked["error"]
        assert fake.requests == []  # never sent
        done = await h.chat("read hello")
        assert done["status"] == "completed" and done["text"] == "after stop"
        first, second, third = fake.requests
        assert "CONTEXT-FROM-HOOK for read hello" in json.dumps(first.body)
        assert "run the linter next" in json.dumps(second.body)
        assert "tests are not run yet" in json.dumps(third.body) and "tests are not run yet" not in json.dumps(second.body)
        assert "my secret" not in json.dumps(third.body)
    finally:
        await stop(h)
