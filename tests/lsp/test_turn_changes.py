"""Issue 41 over the real server: a rewind of the whole conversation is saved, a turn's files in
its `turn_end`, `shiro.turnDiff`, and `shiro.rewind {paths}` (undo of one file); docs/protocol.md
"Checkpoints" and docs/checkpoints.md "What a turn changed"."""

from __future__ import annotations

import asyncio

import pytest
from pygls.exceptions import JsonRpcException

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, start_server, stop

SAVES = {"shiro": {"saveDocuments": True}}


async def _listed_when(h, done):
    """The one listed session once `done(row)` holds (the save runs just after the command)."""
    rows: list = []

    async def poll() -> bool:
        nonlocal rows
        rows = (await h.command("shiro.sessions"))["sessions"]
        return len(rows) == 1 and done(rows[0])

    for _ in range(300):
        if await poll():
            return rows[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"the listing never changed: {rows}")


async def test_rewinding_the_whole_conversation_is_saved(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    fake.script(Reply(calls=[Call("write_file", {"path": "hello.py", "content": "changed\n"})]), Reply(text="first done"),
                Reply(text="second done"))
    try:
        first = await h.chat("first prompt")
        await h.chat("second prompt")
        [row] = (await h.command("shiro.sessions"))["sessions"]
        before = row["messageCount"]
        assert before >= 5 and row["title"] == "first prompt"
        result = await h.command("shiro.rewind", {"turnId": first["turnId"]})
        assert result["messages"] == [] and result["restored"] == ["hello.py"]
        # Saved at once (a rewind ends like a turn): the listing holds no old messages or title.
        row = await _listed_when(h, lambda r: r["messageCount"] != before)
        assert row["id"] == first["sessionId"] and row["messageCount"] == 0 and row["title"] == ""
    finally:
        await stop(h)

    # A restart (a VS Code reload, `shiro -c`): nothing old comes back, and the rewind can still be undone.
    h2 = await start_server(tmp_path, fake, workspace, "neovim", experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    try:
        [row] = (await h2.command("shiro.sessions"))["sessions"]
        assert row["messageCount"] == 0
        resumed = await h2.command("shiro.resume", {"latest": True})
        assert resumed["sessionId"] == first["sessionId"] and resumed["messages"] == []
        [undo_row, *_] = (await h2.command("shiro.checkpoints"))["checkpoints"]
        assert undo_row["kind"] == "rewind"
        undone = await h2.command("shiro.rewind", {"turnId": undo_row["turnId"]})
        assert [m["content"][0]["text"] for m in undone["messages"] if m["role"] == "user"] == ["first prompt", "second prompt"]
        assert (workspace / "hello.py").read_text() == "changed\n"
    finally:
        await stop(h2)


async def test_turn_end_files_turn_diff_and_undo_of_one_file(tmp_path, fake, workspace):
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    h = await start_server(tmp_path, fake, workspace, experimental=SAVES, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    fake.script(
        Reply(calls=[Call("write_file", {"path": "notes.txt", "content": "one\n2\nthree\n"}),
                     Call("write_file", {"path": "big.txt", "content": "".join(f"line {i}\n" for i in range(500))}),
                     Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "\x1b]52;c;ZXZpbA==\x07bye"})]),
        Reply(text="done"),
        Reply(text="no tools"),
    )
    try:
        turn = await h.chat("change three files")
        [end] = [e for e in h.of_turn(turn["turnId"]) if e["type"] == "turn_end"]
        assert sorted((f["path"], f["change"]) for f in end["files"]) == [
            ("big.txt", "added"), ("hello.py", "modified"), ("notes.txt", "modified")]
        quiet = await h.chat("just talk")
        [end] = [e for e in h.of_turn(quiet["turnId"]) if e["type"] == "turn_end"]
        assert "files" not in end  # omitted when the turn changed nothing

        one = await h.command("shiro.turnDiff", {"turnId": turn["turnId"], "path": "notes.txt"})
        assert one == {"turnId": turn["turnId"], "files": [{"path": "notes.txt", "change": "modified"}], "truncated": False,
                       "diff": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three"}
        # The model's escape sequence is shown, never sent (model/visible_text.py).
        edited = await h.command("shiro.turnDiff", {"turnId": turn["turnId"], "path": "hello.py"})
        assert "+print('^[]52;c;ZXZpbA==^Gbye')" in edited["diff"].splitlines() and "\x1b" not in edited["diff"]
        # The whole turn: capped at 400 lines, the last saying how many more.
        whole = await h.command("shiro.turnDiff", {"turnId": turn["turnId"]})
        lines = whole["diff"].splitlines()
        assert whole["truncated"] is True and len(lines) == 401 and lines[0] == "--- /dev/null" and lines[1] == "+++ b/big.txt"
        # big.txt 503 lines (2 headers, 1 hunk, 500 added), hello.py 5, notes.txt 7.
        assert lines[-1] == f"… {503 + 5 + 7 - 400} more lines (see the whole diff)"

        with pytest.raises(JsonRpcException, match="did not change 'other.txt'"):
            await h.command("shiro.turnDiff", {"turnId": turn["turnId"], "path": "other.txt"})
        with pytest.raises(JsonRpcException, match=r"did not change hello2\.py; it changed: big\.txt, hello\.py, notes\.txt"):
            await h.command("shiro.rewind", {"turnId": turn["turnId"], "paths": ["hello2.py"]})
        with pytest.raises(JsonRpcException, match="not inside the workspace"):
            await h.command("shiro.rewind", {"turnId": turn["turnId"], "paths": ["../outside.txt"]})

        # Undo one file: only it goes back, the conversation stays, and the undo is undone like any rewind.
        undo = await h.command("shiro.rewind", {"turnId": turn["turnId"], "paths": ["./notes.txt"]})
        assert undo["restored"] == ["notes.txt"] and undo["prompt"] == "" and "messages" not in undo
        assert (workspace / "notes.txt").read_text() == "one\ntwo\nthree\n" and (workspace / "big.txt").exists()
        assert "bye" in (workspace / "hello.py").read_text()
        [row] = (await h.command("shiro.checkpoints"))["checkpoints"][-1:]
        assert row["turnId"] == turn["turnId"] and "conversation" not in row  # (true: its prompt still in place)
        redo = await h.command("shiro.rewind", {"turnId": undo["undo"]})
        assert redo["restored"] == ["notes.txt"] and (workspace / "notes.txt").read_text() == "one\n2\nthree\n"
    finally:
        await stop(h)
