"""Permission rules and notifications in Neovim (issue 39), a real headless Neovim against the
real server: the approval menu offers "Always allow" for the session, this folder or the user;
the folder's choice writes the command's prefix rule; `:ShiroPermissions` lists it and removes
the one picked; a turn longer than `notifyAfterSeconds` (0 here) ends with a vim.notify."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clients.test_nvim import _run, nvim  # noqa: F401  (nvim is the binary fixture)
from tests.fake_provider import Call, FakeProvider, Reply

SCRIPT = Path(__file__).with_name("nvim_permissions_test.lua")


def test_always_in_this_folder_then_permissions_removes_it(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:  # noqa: F811
    fake.script(Reply(calls=[Call("run_command", {"command": "echo one two"}, "c1")]), Reply(text="ran it"))
    result, _proc, workspace = _run(nvim, fake, tmp_path, SCRIPT)
    approval = next(a for a in result["asked"] if a["kind"] == "shiro_approval")
    assert approval["items"][:4] == ["Allow", "Always allow (this session)", "Always allow in this folder",
                                     "Always allow for me (everywhere)"]
    saved = json.loads(result["saved_after_turn"])
    [entry] = saved["workspaces"].values()
    assert entry["allow"] == ["Bash(echo one two:*)"]
    listing = next(a for a in result["asked"] if a["kind"] == "shiro_permissions")
    assert listing["items"] == ["allow  Bash(echo one two:*)  (workspace)"]
    assert any(a["kind"] == "confirm" and "Bash(echo one two:*)" in a["prompt"] for a in result["asked"])
    assert json.loads(result["saved_after_remove"])["workspaces"][next(iter(saved["workspaces"]))].get("allow", []) == []
    messages = [n["msg"] for n in result["notifications"]]
    assert any(m.startswith("shiro: the turn finished (") for m in messages), messages
    assert "shiro: removed Bash(echo one two:*)" in messages
