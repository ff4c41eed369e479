"""Issue 37 through the real server (pytest-lsp, stdio): the prompt prefix stays byte-identical
across a session's requests while git status, the task list and a nested AGENTS.md arrive as
appended context messages; `shiro.effort` reaches the request; `shiro/status` says effort and
cached tokens (in-process detail: tests/core/test_prompt_prefix.py)."""

from __future__ import annotations

import pytest

from tests.core.test_prompt_prefix import context_texts, conversation, make_repo, session_script, static_part
from tests.support.lsp import EDIT_FILE_MODEL, start_server, stop


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_prefix_context_messages_and_effort_over_the_wire(tmp_path, fake, workspace, wire):
    make_repo(workspace)
    h = await start_server(tmp_path, fake, workspace, init_options={"approvals": "auto", "sandbox": "off", "wireApi": wire},
                           env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    try:
        fake.script(*session_script())
        assert (await h.chat("change hello.py"))["status"] == "completed"
        assert (await h.command("shiro.effort", {"effort": "medium"}))["effort"] == "medium"
        assert (await h.chat("and now?"))["status"] == "completed"
        requests = fake.main_requests
        assert len(requests) == 7 and not fake.rejections
        for before, after in zip(requests, requests[1:]):
            assert static_part(after) == static_part(before)
            assert conversation(after)[: len(conversation(before))] == conversation(before)
        joined = "\n".join(context_texts(conversation(requests[-1])))
        assert joined.count(" M hello.py") == 1 and joined.count("[~] change x") == 1
        assert joined.count("In pkg, run make first.") == 1
        last = requests[-1].body
        assert (last["reasoning"]["effort"] if wire == "responses" else last["reasoning_effort"]) == "medium"
        assert "reasoning" not in requests[0].body and "reasoning_effort" not in requests[0].body
        status = h.statuses[-1]
        assert status["effort"] == "medium" and 0 < status["cachedTokens"] < status["inputTokens"]
    finally:
        await stop(h)
