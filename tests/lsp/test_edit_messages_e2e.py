"""Issue 37's edit_file messages and the fallbacks not covered by test_edit_tools_e2e.py, through the
real server on both wire APIs: an ambiguous match names the line of every occurrence, a miss shows
the closest lines, trailing whitespace and typographic quotes are matched past, `replace_all`
changes every occurrence; each result reaches the model in the next request."""

from __future__ import annotations

import json

import pytest

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client

FILE = (  # the model's old_text below carries trailing spaces the file does not have
    "def a():\n"
    "    x = 1\n"
    "    y = 2\n"
    "    msg = \"it\u2019s\"\n"  # a typographic apostrophe the model writes as '
    "    return x\n"
    "\n"
    "def b():\n"
    "    x = 1\n"
    "    return x\n"
)


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_ambiguity_miss_fallbacks_and_replace_all(tmp_path, fake, workspace, wire):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL),
                           settings={"wireApi": wire, "approvals": "auto"})
    try:
        (workspace / "m.py").write_text(FILE)
        fake.script(
            Reply(calls=[Call("edit_file", {"path": "m.py", "old_text": "x = 1", "new_text": "x = 3"})]),
            Reply(calls=[Call("edit_file", {"path": "m.py", "old_text": "    return 3", "new_text": "    return 4"})]),
            Reply(calls=[Call("edit_file", {"path": "m.py", "old_text": "    x = 1  \n    y = 2", "new_text": "    x = 1\n    y = 20"})]),
            Reply(calls=[Call("edit_file", {"path": "m.py", "old_text": "msg = \"it's\"", "new_text": "msg = \"it is\""})]),
            Reply(calls=[Call("edit_file", {"path": "m.py", "old_text": "x = 1", "new_text": "x = 10", "replace_all": True})]),
            Reply(text="done"),
        )
        result = await h.chat("edit m.py")
        assert result["status"] == "completed", result
        ambiguous, miss, trailing, quotes, every = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert ambiguous["isError"] and "found 2 times" in ambiguous["output"] and "lines 2, 8" in ambiguous["output"]
        assert "replace_all" in ambiguous["output"]
        assert miss["isError"] and "not found" in miss["output"] and "closest lines" in miss["output"]
        assert "return x" in miss["output"]  # the closest lines, with their numbers
        assert not trailing["isError"] and "trailing whitespace" in trailing["output"], trailing["output"]
        assert not quotes["isError"] and "typographic" in quotes["output"]
        assert not every["isError"] and "2" in every["output"]
        assert (workspace / "m.py").read_text() == FILE.replace("x = 1", "x = 10").replace(
            "    y = 2\n", "    y = 20\n").replace("\"it\u2019s\"", "\"it is\"")
        # Each result reached the model in the request after it, on this wire API.
        for n, event in enumerate((ambiguous, miss, trailing, quotes, every), start=1):
            assert fake.main_requests[n].api == wire
            assert json.dumps(event["output"])[1:-1][:60] in json.dumps(fake.main_requests[n].body)
    finally:
        await h.client.shutdown_session()
        await h.client.stop()
