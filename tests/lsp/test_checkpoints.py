"""Checkpoints and rewind end to end (docs/protocol.md, "Checkpoints"): the real server over stdio, a
real shadow git store in the test's SHIRO_NEKO_HOME, the real HTTP fake."""

from __future__ import annotations

import asyncio
import subprocess

from lsprotocol import types

from shiro_neko.state.paths import workspace_key
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client, start_server, stop


# The editor saves what it applies (shiro/saveDocuments, as the VS Code, Neovim and Emacs clients do).
SAVES = {"shiro": {"saveDocuments": True}}


def _user_texts(messages):
    return [m["content"][0]["text"] for m in messages if m["role"] == "user"]


def _typed(h, uri, version, text):
    h.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


async def test_rewind_restores_tools_and_commands_buffers_conflicts_and_is_undone(tmp_path, fake, workspace):
    (workspace / "notes.txt").write_text("the user's notes\n")
    (workspace / "old.txt").write_text("old\n")
    h = await start_server(tmp_path, fake, workspace, experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    try:
        uri = (workspace / "hello.py").as_uri()
        h.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text="print('hello')\n")))
        fake.script(
            Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"}),
                         Call("write_file", {"path": "notes.txt", "content": "agent notes\n"}),
                         Call("run_command", {"command": "rm old.txt && mkdir -p gen && echo built > gen/out.txt"})]),
            Reply(text="first done"),
            Reply(calls=[Call("write_file", {"path": "second.txt", "content": "2\n"})]),
            Reply(text="second done"),
        )
        first = await h.chat("first prompt")
        _typed(h, uri, 2, "print('bye')\n")  # the editor applied the agent's edit
        (workspace / "notes.txt").write_text("the user edited after the agent\n")
        second = await h.chat("second prompt")
        assert first["status"] == second["status"] == "completed"
        listed = (await h.command("shiro.checkpoints"))["checkpoints"]
        assert [c["turnId"] for c in listed] == [second["turnId"], first["turnId"]]
        assert {(f["path"], f["change"]) for f in listed[1]["files"]} == {
            ("hello.py", "modified"), ("notes.txt", "modified"), ("old.txt", "deleted"), ("gen/out.txt", "added")}
        assert listed[0]["files"] == [{"path": "second.txt", "change": "added"}]

        # Files only, from the second turn: the conversation stays.
        only = await h.command("shiro.rewind", {"turnId": second["turnId"], "conversation": False})
        assert only["restored"] == ["second.txt"] and only["prompt"] == "" and "messages" not in only
        assert not (workspace / "second.txt").exists()

        # Files and conversation from the first: the user's later edit is a conflict and survives.
        edits_before = len(h.edits)
        result = await h.command("shiro.rewind", {"turnId": first["turnId"]})
        assert sorted(result["restored"]) == ["gen/out.txt", "hello.py", "old.txt"]
        assert result["conflicts"] == [{"path": "notes.txt", "reason": "changed after the agent last wrote it"}]
        assert (workspace / "notes.txt").read_text() == "the user edited after the agent\n"
        assert (workspace / "hello.py").read_text() == "print('hello')\n" and (workspace / "old.txt").read_text() == "old\n"
        assert not (workspace / "gen" / "out.txt").exists()
        assert result["prompt"] == "first prompt" and result["messages"] == []
        # The open buffer was restored through the editor, the same path as the agent's edits.
        [edit] = h.edits[edits_before:]
        [(edit_uri, [text_edit])] = list(edit.edit.changes.items())
        assert edit_uri == uri and text_edit.new_text == "print('hello')\n"
        _typed(h, uri, 3, text_edit.new_text)  # what the editor reports once it applied the edit

        # The rewind undone: files and the conversation come back.
        undo = await h.command("shiro.rewind", {"turnId": result["undo"]})
        assert sorted(undo["restored"]) == ["gen/out.txt", "hello.py", "old.txt"]
        assert (workspace / "gen" / "out.txt").read_text() == "built\n" and not (workspace / "old.txt").exists()
        assert _user_texts(undo["messages"]) == ["first prompt", "second prompt"]
    finally:
        await stop(h)


async def test_checkpoints_survive_a_restart(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    fake.script(Reply(calls=[Call("write_file", {"path": "hello.py", "content": "changed\n"})]), Reply(text="ok"))
    first = await h.chat("change hello")
    await stop(h)

    h2 = await start_server(tmp_path, fake, workspace, "neovim", experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    try:
        await h2.command("shiro.resume", {"latest": True})
        [row] = (await h2.command("shiro.checkpoints"))["checkpoints"]
        assert row["turnId"] == first["turnId"] and row["files"] == [{"path": "hello.py", "change": "modified"}]
        result = await h2.command("shiro.rewind", {"turnId": first["turnId"]})
        assert result["restored"] == ["hello.py"] and result["prompt"] == "change hello"
        assert (workspace / "hello.py").read_text() == "print('hello')\n"
    finally:
        await stop(h2)


async def test_two_servers_on_one_workspace(tmp_path, fake, workspace):
    with FakeProvider() as other:
        a = await start_server(tmp_path, fake, workspace, experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
        home = tmp_path / "home"
        b = await start_client({"fake": other, "home": home, "root": workspace}, "neovim", server_env(home, other.base_url, SHIRO_MODEL=EDIT_FILE_MODEL),
                               experimental=SAVES)
        try:
            for provider, name in ((fake, "a"), (other, "b")):
                provider.script(
                    *[Reply(calls=[Call("write_file", {"path": f"{name}{i}.txt", "content": f"{name} {i}\n"})]) for i in range(3)],
                    Reply(text=f"{name} done"))
            ra, rb = await asyncio.gather(a.chat("window a"), b.chat("window b"))
            assert ra["status"] == rb["status"] == "completed"
            assert len((await a.command("shiro.checkpoints"))["checkpoints"]) == 1
            # The turns ran at the same time, so a turn's checkpoint may also hold what the other
            # window wrote meanwhile (docs/checkpoints.md); each rewind still restores its own.
            ua = await a.command("shiro.rewind", {"turnId": ra["turnId"], "conversation": False})
            ub = await b.command("shiro.rewind", {"turnId": rb["turnId"], "conversation": False})
            assert {"a0.txt", "a1.txt", "a2.txt"} <= set(ua["restored"]) and ua["conflicts"] == ub["conflicts"] == []
            assert sorted(p.name for p in workspace.iterdir()) == ["hello.py"]
        finally:
            await stop(a)
            await stop(b)
    store = home / "checkpoints" / workspace_key(workspace) / "git"
    fsck = subprocess.run(["git", "--git-dir", str(store), "fsck", "--strict"], capture_output=True, text=True,
                          env={"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"})
    assert fsck.returncode == 0, fsck.stderr
