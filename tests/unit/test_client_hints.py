"""What the clients are told to do next (issue 26): the `-p` denial hint names only a mode that
would have allowed the call, and the shutdown line names the client's own way to resume."""

from __future__ import annotations

from shiro_neko import resume_hints
from shiro_neko.client.oneshot import APPROVAL_ACTIONS, approval_hint

MCP_CALL = "shiro-neko wants to call the MCP tool 'read_file' of server 'fs' with {}"
EDIT = "shiro-neko wants to edit hello.py"


def test_an_mcp_call_is_never_said_to_be_allowed_by_auto_edit() -> None:
    hint = approval_hint(MCP_CALL, APPROVAL_ACTIONS, None)
    assert hint is not None and "--approvals auto " in hint and "auto-edit (edits)" not in hint


def test_an_edit_names_both_modes_and_auto_edit_names_only_auto() -> None:
    assert "--approvals auto-edit (edits)" in (approval_hint(EDIT, APPROVAL_ACTIONS, None) or "")
    assert "auto-edit (edits)" not in (approval_hint("shiro-neko wants to run: make", APPROVAL_ACTIONS, "auto-edit") or "")


def test_no_approvals_hint_where_no_mode_helps() -> None:
    # Under --approvals auto a question is one no flag answers (a command whose sandbox cannot
    # be enforced): the hint names the terminal, no mode.
    under_auto = approval_hint("shiro-neko wants to run: make", APPROVAL_ACTIONS, "auto") or ""
    assert "in a terminal" in under_auto and "pass --approvals" not in under_auto
    assert approval_hint("The project asks to run MCP servers fs. Trust it?", ["Trust", "Don't trust"], None) is None


def test_each_client_gets_its_own_resume_line() -> None:
    assert "shiro -c" in resume_hints.for_lsp_client("shiro")("01a2b3c4")[0]
    for name, expected in (("Visual Studio Code", "Resume Latest Session"), ("code-server", "Resume Latest Session"),
                           ("Neovim", ":ShiroResume"), ("Eglot", "M-x shiro-resume"),
                           ("Helix", "shiro.resume"), (None, "shiro.resume")):
        lines = resume_hints.for_lsp_client(name)("01a2b3c4")
        assert any(expected in line for line in lines), (name, lines)
        assert not any("shiro -c" in line for line in lines), name
        assert any("01a2b3c4" in line for line in lines), name
    assert not any("shiro -c" in line for line in resume_hints.acp("01a2b3c4"))
