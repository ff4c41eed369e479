"""Issue 37 over the real server: `apply_patch` is offered instead of `edit_file` to the model
families trained on it, chosen from the model id (the default `gpt-5` among them) or the
`promptFamily` setting; a patch of several files shows every file's diff in its approval, and
the turn's files, its checkpoint and its undo know every file it touched; a chunk's `@@ <line>`
anchor places text the file repeats elsewhere."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shiro_neko.protocol import plain
from tests.fake_provider import Call, Reply
from tests.support.lsp import server_env, start_client, stop

PATCH = """*** Begin Patch
*** Update File: hello.py
@@
-print('hello')
+print('patched')
*** Add File: pkg/new.py
+NEW = 1
*** Delete File: old.txt
*** End Patch"""


def tool_names(request: Any) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in request.body.get("tools", [])]


async def _client(tmp_path, fake, workspace, settings: dict[str, Any], env: dict[str, str] | None = None):
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url, **(env or {})),
                           # the editor saves what it applied (a file the patch adds is on disk then)
                           experimental={"shiro": {"approvals": True, "saveDocuments": True}},
                           settings=settings)
    h.approvals: list[dict[str, Any]] = []  # type: ignore[attr-defined]

    @h.client.feature("shiro/approve")
    async def on_approve(params: Any) -> Any:
        h.approvals.append(plain(params))  # type: ignore[attr-defined]
        return {"decision": "allow"}

    return h


@pytest.mark.parametrize("wire_api", ["responses", "chat"])
async def test_the_default_model_gets_apply_patch_and_a_multi_file_patch_is_approved_whole(tmp_path, fake, workspace, wire_api):
    (workspace / "old.txt").write_text("to be deleted\n")
    h = await _client(tmp_path, fake, workspace, {"wireApi": wire_api})  # no model: the default, gpt-5
    try:
        fake.script(Reply(calls=[Call("apply_patch", {"input": PATCH}, "call_p")]), Reply(text="patched"))
        result = await h.chat("patch three files")
        assert result["status"] == "completed", result
        first = fake.main_requests[0]
        assert first.api == wire_api and first.body["model"] == "gpt-5"
        assert "apply_patch" in tool_names(first) and "edit_file" not in tool_names(first)
        assert "apply_patch" in (first.body.get("instructions") or first.body["messages"][0]["content"])
        # One approval, and its diff holds every file of the patch (not only the first).
        [approval] = h.approvals  # type: ignore[attr-defined]
        diff = approval["diff"]
        assert "--- a/hello.py\n+++ b/hello.py" in diff and "+print('patched')" in diff
        assert "--- /dev/null\n+++ b/pkg/new.py" in diff and "+NEW = 1" in diff
        assert "--- a/old.txt\n+++ /dev/null" in diff and "-to be deleted" in diff
        assert approval["diffLines"] == len(diff.splitlines())
        assert (workspace / "hello.py").read_text() == "print('patched')\n" and not (workspace / "old.txt").exists()
        # The turn's files and its undo know every file the patch touched.
        await h.wait_for(lambda: any(e["type"] == "turn_end" for e in h.events))
        end = next(e for e in h.events if e["type"] == "turn_end")
        assert sorted((f["path"], f["change"]) for f in end["files"]) == [
            ("hello.py", "modified"), ("old.txt", "deleted"), ("pkg/new.py", "added")]
        undone = await h.command("shiro.rewind", {"turnId": result["turnId"], "paths": ["hello.py", "old.txt", "pkg/new.py"]})
        assert sorted(undone["restored"]) == ["hello.py", "old.txt", "pkg/new.py"]
        assert (workspace / "hello.py").read_text() == "print('hello')\n" and (workspace / "old.txt").exists()
        assert not (workspace / "pkg" / "new.py").exists()
    finally:
        await stop(h)


@pytest.mark.parametrize(("settings", "env", "offered"), [
    ({}, {"SHIRO_MODEL": "qwen3-coder:30b"}, "edit_file"),  # another family: edit_file
    ({"promptFamily": "default"}, {}, "edit_file"),  # the setting overrides the id (gpt-5)
    ({"promptFamily": "codex"}, {"SHIRO_MODEL": "house-alias"}, "apply_patch"),  # a proxy's alias of a codex model
])
async def test_the_edit_tool_follows_the_model_family(tmp_path, fake, workspace, settings, env, offered):
    h = await _client(tmp_path, fake, workspace, settings, env)
    try:
        fake.script(Reply(text="hi"))
        await h.chat("hello")
        names = tool_names(fake.main_requests[0])
        other = "edit_file" if offered == "apply_patch" else "apply_patch"
        assert offered in names and other not in names
    finally:
        await stop(h)


TWICE = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n"


@pytest.mark.parametrize("wire_api", ["responses", "chat"])
async def test_an_anchor_places_repeated_text_and_its_absence_is_refused_with_advice(tmp_path, fake, workspace, wire_api):
    # The same lines in two functions: a bare '@@' is refused naming both places (and how to
    # anchor), '@@ def b():' edits b's copy only; each result reaches the model.
    (workspace / "m.py").write_text(TWICE)
    h = await _client(tmp_path, fake, workspace, {"wireApi": wire_api})  # the default model, gpt-5
    body = " x = 1\n-    return x\n+    return 2\n"
    bare = "*** Begin Patch\n*** Update File: m.py\n@@\n" + "    " + body + "*** End Patch"
    anchored = "*** Begin Patch\n*** Update File: m.py\n@@ def b():\n" + "    " + body + "*** End Patch"
    try:
        fake.script(Reply(calls=[Call("apply_patch", {"input": bare}, "call_1")]),
                    Reply(calls=[Call("apply_patch", {"input": anchored}, "call_2")]), Reply(text="done"))
        result = await h.chat("return 2 from b")
        assert result["status"] == "completed", result
        refused, applied = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert refused["isError"] and "lines 2, 7" in refused["output"]
        assert "'@@ <the header line" in refused["output"]
        assert not applied["isError"], applied["output"]
        assert (workspace / "m.py").read_text() == TWICE[: TWICE.rindex("return x")] + "return 2\n"
        assert fake.main_requests[1].api == wire_api
        assert "lines 2, 7" in json.dumps(fake.main_requests[1].body)
    finally:
        await stop(h)
