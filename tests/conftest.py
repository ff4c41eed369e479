"""Fixtures every test folder shares. The helpers themselves live in tests/support (see
docs/architecture.md, "Writing a test"): `fake` is the real HTTP fake provider of
tests/fake_provider.py, `workspace` a folder with one file in the test's tmp_path, `shiro_home`
the test's SHIRO_NEKO_HOME for code run in the test's own process."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_provider import FakeProvider


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A started fake provider (script it with `fake.script(...)`), stopped after the test."""
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "hello.py").write_text("print('hello')\n")
    return root


@pytest.fixture
def shiro_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """SHIRO_NEKO_HOME for this test, and an environment that names no real endpoint or model
    (a server started as a subprocess gets its environment from `server_env` instead)."""
    path = tmp_path / "home"
    monkeypatch.setenv("SHIRO_NEKO_HOME", str(path))
    # The user settings file of this test (the server reads its `permissions`), never the machine user's.
    monkeypatch.setenv("SHIRO_NEKO_CONFIG", str(tmp_path / "user-settings.json"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    for name in ("OPENAI_BASE_URL", "SHIRO_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return path


def skip_reasons(reports: list[Any]) -> Counter[str]:
    """The reason of each skipped test (`Skipped: ` dropped), counted: one entry per cause."""
    reasons: Counter[str] = Counter()
    for report in reports:
        longrepr = getattr(report, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    return reasons


def skipped_line(reports: list[Any]) -> str | None:
    """README's test command without `.ci/setup`'s installs skips the VS Code, ACP SDK, npm MCP,
    bubblewrap, Neovim and Emacs tests one by one; this one line says which, why, and how to get them."""
    reasons = skip_reasons(reports)
    if not reasons:
        return None
    causes = "; ".join(f"{reason} ({count})" for reason, count in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{sum(reasons.values())} skipped: {causes}. `bash .ci/setup` installs what they need."


_SKIPPED_LINE = pytest.StashKey[str]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    line = skipped_line(terminalreporter.stats.get("skipped", []))
    if line:
        config.stash[_SKIPPED_LINE] = line


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After pytest's own "N passed, M skipped" line, so it is the run's last."""
    line = config.stash.get(_SKIPPED_LINE, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if line and reporter is not None:
        reporter.write_line(line, yellow=True)
