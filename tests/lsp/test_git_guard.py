"""Issue 35, end to end through the real server: git metadata cannot be changed without a yes (3),
and "Always allow" covers the exact call only (9a).

Each test failed on the code before: `write_file .git/config` ran unasked under `auto-edit`, a
sandboxed command planted `core.fsmonitor` that the user's next `git status` ran, and one "Always
allow" on a command let any other command run unasked.
"""

from __future__ import annotations

import pytest

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, start_server, stop
from tests.unit.test_sandbox import _require
from tests.unit.test_sandbox_git import git, make_repo

EVIL_CONFIG = "[core]\n\tfsmonitor = touch PLANTED\n"


def _edited(h):
    """The file names of every edit the server sent the editor (creations and changes)."""
    names = []
    for params in h.edits:
        edit = params.edit
        for uri in edit.changes or {}:
            names.append(uri.rsplit("/", 1)[-1])
        for change in edit.document_changes or []:
            uri = getattr(change, "uri", None) or getattr(getattr(change, "text_document", None), "uri", None)
            if uri:
                names.append(uri.rsplit("/", 1)[-1])
    return list(dict.fromkeys(names))


def _results(h, turn_id):
    return [e for e in h.of_turn(turn_id) if e["type"] == "tool_result"]


@pytest.mark.parametrize("approvals", ["auto-edit", "auto"])
async def test_writing_git_metadata_is_always_asked(tmp_path, fake, workspace, approvals):
    make_repo(workspace)
    config_before = (workspace / ".git" / "config").read_text()
    h = await start_server(tmp_path, fake, workspace, init_options={"approvals": approvals}, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    try:
        h.answers = ["Deny", "Always allow", "Deny"]
        fake.script(
            Reply(calls=[
                Call("write_file", {"path": ".git/config", "content": EVIL_CONFIG}),
                Call("write_file", {"path": "sub/../.git/hooks/post-checkout", "content": "#!/bin/sh\ntouch PLANTED\n"}),
                Call("edit_file", {"path": "./.git/config", "old_text": "[core]", "new_text": EVIL_CONFIG.strip()}),
                Call("write_file", {"path": "notes.txt", "content": "fine\n"}),
            ]),
            Reply(text="done"),
        )
        result = await h.chat("set up git")
        assert result["status"] == "completed"
        # Three asks, each naming git metadata; the plain file under auto-edit/auto is not asked.
        assert len(h.asked) == 3 and all(".git" in a and "always asked" in a for a in h.asked)
        outputs = _results(h, result["turnId"])
        assert outputs[0]["isError"] and outputs[2]["isError"] and not outputs[3]["isError"]
        assert "denied" in outputs[0]["output"] and "denied" in outputs[2]["output"]
        assert (workspace / ".git" / "config").read_text() == config_before
        # What reached the editor: the allowed hook (this once) and the plain file, no config.
        assert _edited(h) == ["post-checkout", "notes.txt"]
        # "Always allow" on a write to .git allowed that one call and no more: the next is asked.
        h.answers = ["Deny"]
        fake.script(Reply(calls=[Call("write_file", {"path": "sub/../.git/hooks/post-checkout", "content": "again"})]), Reply(text="ok"))
        await h.chat("again")
        assert len(h.asked) == 4 and _edited(h) == ["post-checkout", "notes.txt"]
    finally:
        await stop(h)


async def test_a_sandboxed_command_plants_nothing_git_runs_later(tmp_path, fake, workspace):
    _require()
    make_repo(workspace)
    marker = tmp_path / "planted-program-ran"
    h = await start_server(tmp_path, fake, workspace, init_options={"approvals": "auto-edit"}, env={"SHIRO_MODEL": EDIT_FILE_MODEL})
    try:
        fake.script(
            Reply(calls=[
                Call("run_command", {"command": f"git config core.fsmonitor 'touch {marker}; false'"}),
                Call("run_command", {"command": f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout"}),
            ]),
            Reply(text="done"),
        )
        result = await h.chat("configure git")
        assert result["status"] == "completed" and not h.asked  # sandboxed: run unasked under auto-edit
        outputs = _results(h, result["turnId"])
        assert all(not o["output"].startswith("exit code 0") for o in outputs), outputs
        assert "fsmonitor" not in (workspace / ".git" / "config").read_text()
        assert not (workspace / ".git" / "hooks" / "post-checkout").exists()
    finally:
        await stop(h)
    git(workspace, "status")  # the user's next git commands, outside any sandbox
    git(workspace, "checkout", "-q", "-b", "other")
    assert not marker.exists()


async def test_always_allow_covers_the_exact_command_only(harness):
    harness.answers = ["Always allow", "Deny", "Deny"]
    evil = harness.root / "evil-ran"
    harness.fake.script(
        Reply(calls=[Call("run_command", {"command": "echo npm-test"})]),
        Reply(calls=[Call("run_command", {"command": "echo npm-test", "timeout_seconds": 30})]),
        Reply(calls=[Call("run_command", {"command": f"echo npm-test; touch {evil}"})]),
        Reply(calls=[Call("write_file", {"path": "src.txt", "content": "x"})]),
        Reply(text="done"),
    )
    result = await harness.chat("run the tests")
    outputs = _results(harness, result["turnId"])
    assert "npm-test" in outputs[0]["output"] and "npm-test" in outputs[1]["output"]
    assert len(harness.asked) == 3  # the same command again was not asked; the others were
    assert "touch" in harness.asked[1] and outputs[2]["isError"] and not evil.exists()
    assert outputs[3]["isError"] and not (harness.root / "src.txt").exists()


async def test_every_client_is_asked_with_the_command_shown_not_obeyed(harness):
    """The approval text every client shows (VS Code's card, Neovim's and Emacs's prompts, ACP's
    permission title) is made visible by the server: a bidi override would show `rm -rf ~` reversed
    in a browser or Emacs, an escape would act on a terminal. Before, the text went out as the
    model wrote it."""
    harness.answers = ["Deny"]
    harness.fake.script(
        Reply(calls=[Call("run_command", {"command": "echo \u202e~ fr- mr\u202c \x1b]52;c;cHduZWQ=\x07 \x1b[2K"})]),
        Reply(text="done"),
    )
    await harness.chat("run it")
    [asked] = harness.asked
    assert "\u202e" not in asked and "\x1b" not in asked and "\x07" not in asked
    assert "⟨U+202E⟩~ fr- mr⟨U+202C⟩" in asked and "^[]52;c;cHduZWQ=^G" in asked and "^[[2K" in asked
