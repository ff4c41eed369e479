"""Issue 37's file tools through the real server, on both wire APIs: a lost-indentation edit and a
multi-edit land re-indented, a read past the caps says where to go on, and a write over a file the
user changed after the read is refused."""

from __future__ import annotations

import pytest

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_edit_fallbacks_pages_and_stale_write(tmp_path, fake, workspace, wire):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL), settings={"wireApi": wire, "approvals": "auto"})
    try:
        (workspace / "m.py").write_text("class A:\n    def f(self):\n        return 1\n")
        (workspace / "big.txt").write_text("".join(f"{i:05d} " + "y" * 90 + "\n" for i in range(1, 1201)))
        fake.script(
            Reply(calls=[Call("read_file", {"path": "big.txt"})]),
            Reply(calls=[Call("edit_file", {"path": "m.py", "edits": [
                {"old_text": "def f(self):\n    return 1", "new_text": "def f(self):\n    return 2"},
                {"old_text": "class Z:", "new_text": "class B:"},
            ]})]),
            Reply(calls=[Call("read_file", {"path": "m.py"})]),
            Reply(calls=[Call("write_file", {"path": "m.py", "content": "overwritten\n"})]),
            Reply(text="done"),
        )
        result = await h.chat("edit it")

        assert result["status"] == "completed"
        outputs = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert "pass start_line=" in outputs[0]["output"] and "of 1200" in outputs[0]["output"]
        # The second edit finds nothing: refused, so neither is applied.
        assert outputs[1]["isError"] and "edit 2 of 2" in outputs[1]["output"]
        assert not outputs[3]["isError"]  # read, then written: allowed
        assert (workspace / "m.py").read_text() == "overwritten\n"
        sent = fake.requests[2].body
        assert "edit 2 of 2" in str(sent)  # the refusal reached the model on this wire API

        (workspace / "m.py").write_text("class A:\n    def f(self):\n        return 1\n")
        fake.script(
            Reply(calls=[Call("read_file", {"path": "m.py"})]),
            Reply(calls=[Call("edit_file", {"path": "m.py", "edits": [
                {"old_text": "def f(self):\n    return 1", "new_text": "def f(self):\n    return 2"},
                {"old_text": "    1\tclass A:", "new_text": "class B:"},
            ]})]),
            Reply(calls=[Call("read_file", {"path": "m.py"})]),
            Reply(calls=[Call("write_file", {"path": "m.py", "content": "x\n"})]),
            Reply(text="done"),
        )
        second = await h.chat("again")
        outs = [e for e in h.of_turn(second["turnId"]) if e["type"] == "tool_result"]
        assert not outs[1]["isError"] and "ignoring indentation" in outs[1]["output"]
        # Written after its own read: allowed; a change by the user in between would not be (below).
        assert outs[2]["output"].startswith("    1\tclass B:\n    2\t    def f(self):\n    3\t        return 2")
        assert not outs[3]["isError"] and (workspace / "m.py").read_text() == "x\n"
        (workspace / "m.py").write_text("the user's version\n")
        fake.script(Reply(calls=[Call("write_file", {"path": "m.py", "content": "agent\n"})]), Reply(text="ok"))
        third = await h.chat("write")
        [stale] = [e for e in h.of_turn(third["turnId"]) if e["type"] == "tool_result"]
        assert stale["isError"] and "read it again" in stale["output"]
        assert (workspace / "m.py").read_text() == "the user's version\n"
    finally:
        await h.client.shutdown_session()
        await h.client.stop()
