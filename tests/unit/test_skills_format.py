"""Skill and command files as Claude Code writes them (agent/skills.py): front matter, arguments,
what counts as `/name`, hook answers (agent/hooks.py interpret)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_neko.agent.hooks import HookRun, commands_for, interpret
from shiro_neko.agent.skills import expand, front_matter, parse, split_slash
from shiro_neko.project_instructions import Found


def command(text: str) -> object:
    return parse(Found("command", "review", Path("/x/review.md"), ".claude/commands"), text.encode(), "project")


def test_claude_codes_own_argument_hint_examples_are_read() -> None:
    entry = command("---\nallowed-tools: Bash(git add:*), Bash(git status:*)\nargument-hint: [pr-number] [priority] [assignee]\n"
                    "description: Review a pull request\n---\nReview PR #$1 with priority $2 and assign to $3.\n")
    assert entry.argument_hint == "[pr-number] [priority] [assignee]" and entry.description == "Review a pull request"
    assert expand(entry, "456 high alice") == "Review PR #456 with priority high and assign to alice."
    assert expand(entry, "456") == "Review PR #456 with priority  and assign to ."


def test_arguments_are_never_lost_and_a_plain_file_is_described_by_its_first_line() -> None:
    entry = command("# Fix the flaky test\nRun it ten times.\n")
    assert entry.description == "Fix the flaky test"
    assert expand(entry, "tests/test_x.py") == "# Fix the flaky test\nRun it ten times.\n\nARGUMENTS: tests/test_x.py"
    assert expand(command("Do $ARGUMENTS now"), "a b") == "Do a b now"


def test_front_matter_runs_no_code_and_bad_files_say_why() -> None:
    with pytest.raises(ValueError, match="not a mapping"):
        front_matter("---\n- a list\n---\nbody")
    meta, body = front_matter("---\nx: !!python/object/apply:os.system ['touch /tmp/pwned']\n---\nbody")
    assert meta == {"x": "!!python/object/apply:os.system ['touch /tmp/pwned']"} and body == "body"  # plain text
    with pytest.raises(ValueError, match="no closing"):
        front_matter("---\ndescription: x\nbody")
    with pytest.raises(ValueError, match="description"):
        parse(Found("skill", "pdf", Path("/x/SKILL.md"), ".claude/skills"), b"---\nname: pdf\n---\nbody", "user")
    with pytest.raises(ValueError, match="UTF-8"):
        parse(Found("command", "x", Path("/x/x.md"), ".claude/commands"), b"\xff\xfe", "user")


def test_what_is_a_slash_command() -> None:
    assert split_slash("/review src/a.py speed") == ("review", "src/a.py speed")
    assert split_slash("/review\nmore lines") == ("review", "more lines")
    assert split_slash("/usr/bin/env python") is None
    assert split_slash("please /review") is None


def test_hook_answers() -> None:
    deny = HookRun("h", code=0, stdout='{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}')
    allow = HookRun("h", code=0, stdout='{"hookSpecificOutput": {"permissionDecision": "allow"}}')
    out = interpret("PreToolUse", [allow, deny])
    assert (out.decision, out.reason) == ("deny", "no")  # deny beats allow
    assert interpret("PreToolUse", [HookRun("h", code=0, stdout='{"decision": "approve"}')]).decision == "allow"
    failed = interpret("PreToolUse", [allow, HookRun("h", failure="timed out after 1 s")])
    assert failed.failed and failed.decision == "allow" and "timed out" in failed.notices[0]
    assert interpret("UserPromptSubmit", [HookRun("h", code=0, stdout="plain context")]).context == ["plain context"]
    blocked = interpret("Stop", [HookRun("h", code=2, stderr="not yet")])
    assert blocked.blocked and blocked.reason == "not yet"


def test_matchers() -> None:
    setting = {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "a"}]},
                              {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "b", "timeout": 5}]},
                              {"hooks": [{"type": "command", "command": "c"}]},
                              {"matcher": "(", "hooks": [{"type": "command", "command": "d"}]}]}
    problems: list[str] = []
    assert [c.command for c in commands_for(setting, "PreToolUse", "edit_file", 60, problems)] == ["a", "c"]
    assert [(c.command, c.timeout) for c in commands_for(setting, "PreToolUse", "mcp__git__status", 60, [])] == [("b", 5.0), ("c", 60.0)]
    assert [c.command for c in commands_for(setting, "PreToolUse", "run_command", 60, [])] == ["c"]
    assert any("not a regular expression" in p for p in problems)
