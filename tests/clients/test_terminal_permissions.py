"""Permission rules in the terminal client against the real server (issue 39): an approval's
`f` (always in this folder) and `u` (always for the user) write the command's prefix rule there,
`/permissions` lists the rules and `/permissions rm N` removes one; `-p` takes the same keys;
a cloned repository's `permissions.allow` never applies before trust."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pexpect

from shiro_neko.client.typed_ahead import QUIET_S
from shiro_neko.state.paths import workspace_key
from tests.clients.test_terminal import SHIRO, Term, run, wait_requests
from tests.clients.test_terminal import cold_env, env, term  # noqa: F401 - fixtures
from tests.fake_provider import Call, Reply


C = r"(?:\x1b\[[0-9;]*m)*"  # colours between the words of a line


def _answer(t: Term, key: str) -> None:
    time.sleep(QUIET_S + 0.1)  # a key at a question counts after a pause (typed_ahead.py)
    t.type(key, enter=False)


def _folder_rules(env: dict[str, str], workspace: Path) -> list[str]:
    saved = json.loads((Path(env["SHIRO_NEKO_HOME"]) / "permissions.json").read_text())
    return saved["workspaces"][workspace_key(workspace)].get("allow", [])


def test_always_in_this_folder_then_permissions_lists_and_removes_it(workspace, env, fake, term):
    fake.script(Reply(calls=[Call("run_command", {"command": "echo one two"}, "c1")]), Reply(text="ran it"),
                Reply(calls=[Call("run_command", {"command": "echo one three"}, "c2")]), Reply(text="again"))
    t = term("--approvals", "ask")
    t.type("run it")
    t.expect(r"al\[w\]ays \(session / \[f\]older / \[u\]ser\)")
    _answer(t, "f")
    t.expect("always allowed in this folder")
    t.expect(r"allowed from now on in this folder: Bash\(echo one two:\*\)")
    t.expect("ran it")
    assert _folder_rules(env, workspace) == ["Bash(echo one two:*)"]
    t.type("/permissions")
    t.expect(rf"1\s+{C}allow\s+{C}Bash\(echo one two:\*\){C}\s+\(this folder\)")
    t.type("/permissions rm 1")
    t.expect(r"removed allow Bash\(echo one two:\*\) \(this folder\)")
    assert _folder_rules(env, workspace) == []
    t.type("/permissions")
    t.expect("no permission rules")
    t.leave()


def test_print_takes_u_for_always_for_the_user(tmp_path, workspace, env, fake):
    user_file = Path(env["SHIRO_NEKO_CONFIG"])
    user_file.write_text(json.dumps({"approvals": "ask"}))
    fake.script(Reply(calls=[Call("run_command", {"command": "git status --short"}, "c1")]), Reply(text="done"))
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["-p", "status please"], cwd=str(workspace), env=env,
                          dimensions=(40, 120), encoding="utf-8")
    child.expect(r"\[f\]older / \[u\]ser\) / \[d\]eny", timeout=120)
    child.send("u\r")
    child.expect(pexpect.EOF, timeout=120)
    assert "done" in child.before
    assert json.loads(user_file.read_text()) == {"approvals": "ask", "permissions": {"allow": ["Bash(git status:*)"]}}


def test_a_cloned_repository_s_allow_everything_rule_waits_for_trust(tmp_path, workspace, env, fake):
    # The attack: a repository ships `.shiro-neko/settings.json` allowing every command.
    (workspace / ".shiro-neko").mkdir()
    (workspace / ".shiro-neko/settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(*)", "Bash"]}}))
    fake.script(Reply(calls=[Call("run_command", {"command": "touch pwned"}, "c1")]), Reply(text="tried"))
    done = run(["-p", "set up the project"], workspace, env)  # no terminal: nothing can say yes
    assert "permissions.allow" in done.stderr  # the held-back line names it
    assert not (workspace / "pwned").exists()
    [request] = [r for r in wait_requests(fake, 2)[1:]]
    outputs = [str(i.get("output")) for i in request.body.get("input", []) if i.get("type") == "function_call_output"]
    assert outputs and "denied" in outputs[0]
