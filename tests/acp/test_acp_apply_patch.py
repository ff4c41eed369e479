"""`shiro acp` with the default model (gpt-5), whose edit tool is apply_patch (issue 37): the editor
gets a location for every file of the patch, and after the call a diff for every file it wrote."""

from __future__ import annotations

from tests.acp.conftest import run_acp
from tests.fake_provider import Call, Reply

PATCH = """*** Begin Patch
*** Update File: hello.py
@@
-print('hello')
+print('patched')
*** Add File: pkg/new.py
+NEW = 1
*** End Patch"""


async def test_a_patch_shows_every_file(tmp_path, fake, workspace):
    async with run_acp(tmp_path / "home", workspace, fake, SHIRO_MODEL="gpt-5") as acp:
        fake.script(Reply(calls=[Call("apply_patch", {"input": PATCH}, "call_p")]), Reply(text="Patched."))
        session_id = await acp.new_session()
        assert (await acp.prompt(session_id, "patch it")).stop_reason == "end_turn"
        [start] = acp.client.of_kind("tool_call")
        assert start.kind == "edit" and start.title == "Patch hello.py, pkg/new.py"
        assert [loc.path for loc in start.locations] == [str(workspace / "hello.py"), str(workspace / "pkg" / "new.py")]
        done = [u for u in acp.client.of_kind("tool_call_update") if u.status == "completed"][-1]
        diffs = {c.path: (c.old_text, c.new_text) for c in done.content if c.type == "diff"}
        assert diffs == {str(workspace / "hello.py"): ("print('hello')\n", "print('patched')\n"),
                         str(workspace / "pkg" / "new.py"): (None, "NEW = 1\n")}
