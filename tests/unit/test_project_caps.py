"""Numbers an untrusted project may lower but not raise (issue 35, item 9): `maxSteps` (each step
a paid provider request) and `compactThreshold` (tokens sent before pruning). Before, a cloned
repository's `.shiro-neko/settings.json` set both with no upper bound and they applied at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.config import Settings, merge_settings
from shiro_neko.project_settings import CAPPED, project_view
from shiro_neko.state.paths import workspace_key
from shiro_neko.state.trust import TrustStore
from shiro_neko.user_settings import ENV_VAR, load_user_settings

HUGE = {"maxSteps": 1_000_000, "compactThreshold": 10_000_000}


def test_the_caps_are_the_settings_defaults() -> None:
    defaults = Settings()
    assert CAPPED == {"maxSteps": defaults.maxSteps, "compactThreshold": defaults.compactThreshold,
                      "subagentMaxSteps": defaults.subagentMaxSteps}


@pytest.mark.parametrize("raw", [HUGE, {"shiro": HUGE}, {"shiro.maxSteps": 1_000_000, "shiro.compactThreshold": 10_000_000}],
                         ids=["plain", "wrapped", "dotted"])
def test_higher_than_the_default_waits_for_trust(raw: dict[str, Any]) -> None:
    view = project_view(raw)
    assert view.safe == {}
    assert view.held == ["compactThreshold", "maxSteps"]
    applied = merge_settings(Settings(), view.safe)
    assert applied.maxSteps == 50 and applied.compactThreshold == 120_000


def test_lower_applies_and_the_users_own_value_is_the_cap() -> None:
    assert project_view({"maxSteps": 10, "compactThreshold": 30_000}).safe == {"maxSteps": 10, "compactThreshold": 30_000}
    assert project_view({"maxSteps": 50}).safe == {"maxSteps": 50}  # the default itself
    # A user who raised them lets a project go as far as the user did, no further.
    user = {"maxSteps": 200, "compactThreshold": 400_000}
    assert project_view({"maxSteps": 150, "compactThreshold": 400_000}, user).safe == {"maxSteps": 150, "compactThreshold": 400_000}
    assert project_view({"maxSteps": 201}, user).held == ["maxSteps"]
    # A user who lowered them: the project may not raise back to the default.
    assert project_view({"maxSteps": 50}, {"shiro": {"maxSteps": 20}}).held == ["maxSteps"]


@pytest.mark.parametrize("value", [True, 1e9, "1000", None, [1]])
def test_a_value_that_is_not_a_count_waits(value: Any) -> None:
    assert project_view({"maxSteps": value}).held == ["maxSteps"]
    assert project_view({"maxSteps": {"x": 1}}).held == ["maxSteps.x"]  # an object: unknown keys, which wait


def test_through_the_settings_files_before_and_after_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path `shiro` and `shiro acp` read a project through: clamped before trust, as set after."""
    user_file = tmp_path / "user.json"
    user_file.write_text(json.dumps({"maxSteps": 80}))
    monkeypatch.setenv(ENV_VAR, str(user_file))
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    (ws / ".shiro-neko").mkdir(parents=True)
    settings = ws / ".shiro-neko" / "settings.json"
    settings.write_text(json.dumps(HUGE))
    store = TrustStore(home)

    before = load_user_settings(ws, store.lookup(workspace_key(ws), ws))
    applied = merge_settings(Settings(), before.settings)
    assert applied.maxSteps == 80 and applied.compactThreshold == 120_000  # the user's own and the default
    assert [h.keys for h in before.held] == [["compactThreshold", "maxSteps"]]

    [held] = before.held
    store.record(workspace_key(ws), ws, {held.name: held.sha256}, "trusted")
    after = load_user_settings(ws, store.lookup(workspace_key(ws), ws))
    applied = merge_settings(Settings(), after.settings)
    assert applied.maxSteps == 1_000_000 and applied.compactThreshold == 10_000_000
    assert after.held == []


@pytest.mark.parametrize("raw", [{"sandboxAllowRead": ["~/.ssh", "~/.aws"]}, {"shiro": {"sandboxAllowRead": ["~"]}},
                                 {"shiro.sandboxAllowRead": ["/"]}], ids=["plain", "wrapped", "dotted"])
def test_a_project_cannot_open_the_hidden_home_before_trust(raw: dict[str, Any]) -> None:
    """`sandboxAllowRead` loosens the sandbox (issue 35, 9b): a cloned repository naming `~/.ssh`
    there would hand its commands the user's keys. Like `sandbox: off`, it waits for trust."""
    view = project_view(raw)
    assert view.safe == {} and view.held == ["sandboxAllowRead"]
    assert merge_settings(Settings(), view.safe).sandboxAllowRead == Settings().sandboxAllowRead
