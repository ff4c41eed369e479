"""Tools end to end: approvals, edits through the editor, buffers, the workspace boundary, shell."""

from __future__ import annotations

import asyncio
import os

import pytest
from lsprotocol import types

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client


def _result(harness, turn_id):
    return [e for e in harness.of_turn(turn_id) if e["type"] == "tool_result"]


async def test_command_approval_allowed(harness):
    harness.answers = ["Allow"]
    harness.fake.script(Reply(calls=[Call("run_command", {"command": "echo approved-run"})]), Reply(text="ran it"))
    result = await harness.chat("run echo")
    assert result["status"] == "completed"
    assert len(harness.asked) == 1 and "echo approved-run" in harness.asked[0]
    [tool] = _result(harness, result["turnId"])
    assert "approved-run" in tool["output"] and not tool["isError"]


async def test_command_approval_denied(harness):
    harness.answers = ["Deny"]
    marker = harness.root / "should-not-exist"
    harness.fake.script(Reply(calls=[Call("run_command", {"command": f"touch {marker}"})]), Reply(text="ok, not running"))
    result = await harness.chat("touch a file")
    assert result["status"] == "completed"
    [tool] = _result(harness, result["turnId"])
    assert tool["isError"] and "denied" in tool["output"]
    assert not marker.exists()
    outputs = [i for i in harness.fake.requests[1].body["input"] if i.get("type") == "function_call_output"]
    assert "denied" in outputs[0]["output"]


async def test_dismissed_dialog_is_a_deny_and_always_allow_sticks(harness):
    harness.answers = [None, "Always allow"]
    harness.fake.script(
        Reply(calls=[Call("run_command", {"command": "echo one"})]),
        Reply(calls=[Call("run_command", {"command": "echo two"})]),
        Reply(calls=[Call("run_command", {"command": "echo two"})]),
        Reply(text="done"),
    )
    result = await harness.chat("run things")
    outputs = _result(harness, result["turnId"])
    assert outputs[0]["isError"] and "denied" in outputs[0]["output"]
    assert "two" in outputs[1]["output"] and "two" in outputs[2]["output"]
    assert len(harness.asked) == 2  # the same command again was covered by "Always allow" (tests/lsp/test_git_guard.py: only it)


@pytest.mark.every_client
async def test_edit_of_open_file_arrives_as_apply_edit(harness):
    uri = (harness.root / "hello.py").as_uri()
    harness.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text="print('hello')\n"))
    )
    harness.answers = ["Allow"]
    # A model offered edit_file (the default, gpt-5, gets apply_patch: agent/model_family.py).
    harness.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"shiro": {"model": EDIT_FILE_MODEL}}))
    harness.fake.script(
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bonjour"})]),
        Reply(text="edited"),
    )
    result = await harness.chat("translate")
    assert result["status"] == "completed"
    assert len(harness.edits) == 1
    changes = harness.edits[0].edit.changes
    [(edit_uri, [text_edit])] = list(changes.items())
    assert edit_uri == uri and text_edit.new_text == "print('bonjour')\n"
    # No saveDocuments offered by this client: the edit stays in its buffer, and the file is not
    # written behind the editor's back (Emacs: "changed since visited" at the next save).
    assert (harness.root / "hello.py").read_text() == "print('hello')\n"


@pytest.mark.every_client
async def test_rejected_edit_is_reported(harness):
    uri = (harness.root / "hello.py").as_uri()
    harness.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text="print('hello')\n"))
    )
    harness.apply_edits = False
    harness.fake.script(
        Reply(calls=[Call("write_file", {"path": "hello.py", "content": "x = 1\n"})]),
        Reply(text="ok"),
    )
    result = await harness.chat("rewrite")
    [tool] = _result(harness, result["turnId"])
    assert tool["isError"] and "rejected" in tool["output"]
    assert (harness.root / "hello.py").read_text() == "print('hello')\n"


async def test_agent_reads_unsaved_buffer(harness):
    uri = (harness.root / "hello.py").as_uri()
    harness.client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text="print('hello')\n"))
    )
    harness.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="print('unsaved edit')\n")],
        )
    )
    harness.fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"})]), Reply(text="seen"))
    result = await harness.chat("read it")
    [tool] = _result(harness, result["turnId"])
    assert "unsaved edit" in tool["output"]


async def test_path_escape_is_refused(harness):
    outside = harness.root.parent / "secret.txt"
    outside.write_text("top secret\n")
    os.symlink(outside, harness.root / "link.txt")
    harness.fake.script(
        Reply(
            calls=[
                Call("read_file", {"path": "../secret.txt"}, "call_up"),
                Call("read_file", {"path": str(outside)}, "call_abs"),
                Call("read_file", {"path": "link.txt"}, "call_link"),
            ]
        ),
        Reply(text="could not"),
    )
    result = await harness.chat("read the secret")
    tools = _result(harness, result["turnId"])
    assert len(tools) == 3
    for tool in tools:
        assert tool["isError"] and "outside the workspace" in tool["output"]
        assert "top secret" not in tool["output"]


async def test_abort_kills_a_running_command(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await start_client(
        {"fake": fake, "home": home, "root": workspace}, "neovim", server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL),
        # Unsandboxed: `$$` must be the host's pid (test_sandbox covers the sandboxed kill).
        init_options={"approvals": "auto", "sandbox": "off"},
    )
    try:
        pid_file = workspace / "pid"
        fake.script(Reply(calls=[Call("run_command", {"command": f"echo $$ > {pid_file}; exec sleep 60"}, "call_sleep")]))
        running = h.start_chat("sleep")
        await h.wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
        pid = int(pid_file.read_text())
        aborted = await h.command("shiro.abort")
        assert aborted["aborted"] is True
        result = await running
        result = result if isinstance(result, dict) else result._asdict()
        assert result["status"] == "aborted"
        [tool] = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert tool["isError"] and tool["output"] == "aborted by the user"
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the command survived the abort")
        # The next request carries the call with its "aborted" output: no 400.
        fake.script(Reply(text="ok"))
        await h.chat("next")
        assert not fake.rejections
    finally:
        await h.client.shutdown_session()
        await h.client.stop()


async def test_each_workspace_folder_is_its_own_boundary(tmp_path, fake):
    home = tmp_path / "home"
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "only-in-a.txt").write_text("A\n")
    h = await start_client(
        {"fake": fake, "home": home, "root": a}, "visual-studio-code", server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL), folders=[a, b]
    )
    try:
        fake.script(Reply(calls=[Call("read_file", {"path": "only-in-a.txt"})]), Reply(text="b"))
        in_b = await h.chat("read", workspace=b.as_uri())
        [tool] = [e for e in h.of_turn(in_b["turnId"]) if e["type"] == "tool_result"]
        assert tool["isError"]  # not found in b
        fake.script(Reply(text="a"))
        in_a = await h.chat("hi")
        assert in_a["sessionId"] != in_b["sessionId"]
        assert str(b) in fake.requests[0].body["instructions"] and str(a) in fake.requests[2].body["instructions"]
    finally:
        await h.client.shutdown_session()
        await h.client.stop()


async def test_workspace_folders_can_change(tmp_path, fake):
    from pygls.exceptions import JsonRpcException

    home = tmp_path / "home"
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    h = await start_client({"fake": fake, "home": home, "root": a}, "visual-studio-code", server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL))
    try:
        with pytest.raises(JsonRpcException) as caught:
            await h.chat("hi", workspace=b.as_uri())
        assert "not a workspace folder" in caught.value.message
        h.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri=b.as_uri(), name="b")], removed=[])
            )
        )
        fake.script(Reply(text="in b"))
        result = await h.chat("hi", workspace=b.as_uri())
        assert result["text"] == "in b" and str(b) in fake.requests[0].body["instructions"]
        h.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[types.WorkspaceFolder(uri=b.as_uri(), name="b")])
            )
        )
        with pytest.raises(JsonRpcException):
            await h.command("shiro.status", {"workspace": b.as_uri()})
    finally:
        await h.client.shutdown_session()
        await h.client.stop()
