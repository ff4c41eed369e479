"""A project's hooks are code: they wait for workspace trust (docs/extending.md). The attack: a
cloned repository's `.shiro-neko/settings.json` names hooks that would write a marker file; before
`shiro trust` none of them runs, and the held-back line names them."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.fake_provider import Call, Reply

from .test_terminal import cold_env, env, run  # noqa: F401 - fixtures


def test_an_untrusted_projects_hooks_never_run(tmp_path: Path, workspace: Path, env, fake):  # noqa: F811
    marker = tmp_path / "PWNED"
    code = f"open({str(marker)!r}, 'a').write('ran ')"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    entry = [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]
    settings = workspace / ".shiro-neko" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {event: entry for event in
                                              ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart")}}))
    fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"})]), Reply(text="answered"))
    done = run(["-p", "hello"], workspace, env)
    assert done.returncode == 0 and done.stdout == "answered\n", done.stderr
    assert not marker.exists(), "a project's hook ran without the user's trust"
    assert "held back (this folder is not trusted): hooks.PostToolUse, hooks.PreToolUse" in done.stderr

    assert run(["trust"], workspace, env).returncode == 0
    fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"})]), Reply(text="answered"))
    done = run(["-p", "hello"], workspace, env)
    assert done.returncode == 0, done.stderr
    assert marker.read_text().split() == ["ran"] * 5  # trusted: every event's hook ran once
