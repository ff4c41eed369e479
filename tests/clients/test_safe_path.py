"""Starting `shiro` in a repository never runs the repository's Python files (issue 35 item 1).

The workspace carries a planted copy of every module the server and the client import
(tests/support/planted_modules.py), each recording its import; `shiro` runs in it as a user runs
it (the console script, a real server process, the HTTP fake provider): cold `-p`, the
interactive terminal, and a run served by the warm server. None of the planted modules may run,
and the answer must be the real server's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.test_terminal import Term
from tests.clients.test_warm import run, runtime, wait_for_socket, warm_children, warm_env  # noqa: F401 - runtime: a fixture
from tests.fake_provider import FakeProvider, Reply
from tests.support import planted_modules
from tests.support.lsp import server_env


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """(the planted workspace, where the planted modules would record their import)."""
    root = tmp_path / "repo"
    root.mkdir()
    marks = tmp_path / "marks"
    assert planted_modules.plant(root, marks) > 300
    return root, marks


def test_cold_print_runs_none_of_the_workspace_modules(tmp_path, hostile, fake: FakeProvider):
    root, marks = hostile
    fake.script(Reply(text="the real server"))
    done = run(["-p", "hello"], root, server_env(tmp_path / "home", fake.base_url))
    assert planted_modules.imported(marks) == []
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the real server\n"


def test_interactive_runs_none_of_the_workspace_modules(tmp_path, hostile, fake: FakeProvider):
    root, marks = hostile
    fake.script(Reply(text="interactive answer"))
    term = Term([], root, server_env(tmp_path / "home", fake.base_url, TERM="xterm"))
    try:
        term.type("hello")
        term.expect("interactive answer")
        term.leave()
    finally:
        term.close()
    assert planted_modules.imported(marks) == []


def test_a_warm_run_runs_none_of_the_workspace_modules(tmp_path, hostile, runtime, fake: FakeProvider):  # noqa: F811
    root, marks = hostile
    env = warm_env(tmp_path, runtime, fake)
    clean = tmp_path / "clean"
    clean.mkdir()
    fake.script(Reply(text="cold"), Reply(text="warm"))
    first = run(["-p", "first"], clean, env)  # leaves the warm server behind
    assert first.returncode == 0, first.stderr
    wait_for_socket(runtime)
    done = run(["-p", "second"], root, env)
    assert planted_modules.imported(marks) == []
    assert done.returncode == 0, done.stderr
    assert done.stdout == "warm\n"
    assert warm_children(tmp_path) == 1  # the second run was the warm server's fork
