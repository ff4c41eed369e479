"""`shiro acp` started by the editor in the project folder never runs the project's Python files
(issue 35 item 1): every module the server imports is planted at the workspace root
(tests/support/planted_modules.py) and none may run; the answer is the real server's."""

from __future__ import annotations

from tests.fake_provider import Reply
from tests.support import planted_modules

from .conftest import run_acp


async def test_acp_runs_none_of_the_workspace_modules(tmp_path, fake, workspace):
    marks = tmp_path / "marks"
    assert planted_modules.plant(workspace, marks) > 300
    try:
        async with run_acp(tmp_path / "home", workspace, fake) as acp:
            fake.script(Reply(text="the real agent"))
            session_id = await acp.new_session()
            await acp.prompt(session_id, "hello")
            assert acp.client.text() == "the real agent"
    finally:
        assert planted_modules.imported(marks) == []
