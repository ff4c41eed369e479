"""Issue 41 over the real server: `shiro/approve` carries an edit's unified diff (capped, shown not
obeyed), and a deny's reason reaches the model in the tool result on both wire APIs."""

from __future__ import annotations

from typing import Any

import pytest

from shiro_neko.protocol import plain
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client, stop


async def _client(tmp_path, fake, workspace, answers: list[Any], settings: dict[str, Any] | None = None):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL), experimental={"shiro": {"approvals": True}}, settings=settings)
    h.approvals: list[dict[str, Any]] = []  # type: ignore[attr-defined]

    @h.client.feature("shiro/approve")
    async def on_approve(params: Any) -> Any:
        h.approvals.append(plain(params))  # type: ignore[attr-defined]
        return answers.pop(0)

    return h


def _tool_output(request: Any) -> str:
    body = request.body
    if request.api == "chat":
        [out] = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
        return out
    [out] = [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]
    return out


@pytest.mark.parametrize("wire_api", ["responses", "chat"])
async def test_a_deny_reason_reaches_the_model(tmp_path, fake, workspace, wire_api):
    h = await _client(tmp_path, fake, workspace, [{"decision": "deny", "reason": "use the logger, not print"}],
                      settings={"wireApi": wire_api})
    try:
        fake.script(Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"})]),
                    Reply(text="ok"))
        result = await h.chat("edit it")
        assert result["status"] == "completed" and (workspace / "hello.py").read_text() == "print('hello')\n"
        second = fake.main_requests[1]
        assert second.api == wire_api
        assert _tool_output(second) == "The user denied this call: use the logger, not print"
    finally:
        await stop(h)


async def test_a_deny_without_reason_stays_as_it_was(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, [{"decision": "deny", "reason": "  "}])
    try:
        fake.script(Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"})]),
                    Reply(text="ok"))
        await h.chat("edit it")
        assert _tool_output(fake.main_requests[1]) == "denied: the user did not allow this call"
    finally:
        await stop(h)


async def test_the_approval_carries_the_edit_diff_capped_and_visible(tmp_path, fake, workspace):
    big = "".join(f"line {i}\n" for i in range(450))
    h = await _client(tmp_path, fake, workspace, [{"decision": "allow"}, {"decision": "allow"}])
    try:
        fake.script(
            Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "\x1b[2Kbye\u202e"})]),
            Reply(calls=[Call("write_file", {"path": "big.txt", "content": big})]),
            Reply(text="ok"))
        await h.chat("edit it")
        edit, write = h.approvals  # type: ignore[attr-defined]
        assert edit["diff"] == ("--- a/hello.py\n+++ b/hello.py\n@@ -1 +1 @@\n-print('hello')\n"
                                "+print('^[[2Kbye⟨U+202E⟩')")
        assert edit["diffLines"] == 5
        # A new file: from /dev/null; 453 lines, 400 sent and a line saying how many more.
        lines = write["diff"].splitlines()
        assert write["diffLines"] == 453 and len(lines) == 401
        assert lines[:3] == ["--- /dev/null", "+++ b/big.txt", "@@ -0,0 +1,450 @@"]
        assert lines[-1] == "… 53 more lines (see the whole diff)"
    finally:
        await stop(h)
