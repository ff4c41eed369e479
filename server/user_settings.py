"""The user settings file (docs/configuration.md), for clients without a settings UI of their own.

The terminal client and the ACP front end send what this returns as their `shiro` settings
section (flags go on top). Editors keep their own settings and never read these files.

- user file: `$SHIRO_NEKO_CONFIG`, else `settings.json` in `platformdirs.user_config_path("shiro-neko")`;
- project file: `<workspace>/.shiro-neko/settings.json`, whose keys override the user's only as
  project_settings.py allows: safe keys and tightenings at once, the rest once the user trusts
  that content (`trust` answers from the record, state/trust.py). Its MCP servers (every spelling)
  never travel as the user's settings: the server runs them as project servers after the same
  trust step as `.mcp.json`'s (mcp/workspace_servers.py).

A file that does not parse (or is not a JSON object) is named in `problems` and ignored; a missing
file is no problem. Only the standard library and platformdirs are imported: the terminal
client's cold start pays for this module.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .project_settings import HeldFile, project_files

ENV_VAR = "SHIRO_NEKO_CONFIG"

# (file relative to the workspace, its SHA-256) -> "trusted", "declined" or None (never asked).
TrustLookup = Callable[[str, str], "str | None"]


@dataclass
class UserSettings:
    settings: dict[str, Any] = field(default_factory=dict)  # the `shiro` section, merged
    held: list[HeldFile] = field(default_factory=list)  # project files holding keys back (not trusted)
    problems: list[str] = field(default_factory=list)  # one line per file that was ignored
    files: list[Path] = field(default_factory=list)  # the files that were read


def user_settings_path() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    import platformdirs  # noqa: PLC0415 - only when no override is set

    return platformdirs.user_config_path("shiro-neko") / "settings.json"


class SettingsFileError(ValueError):
    """The user file cannot take a setting (it does not parse): it is left as it is."""


def save_user_setting(name: str, value: Any) -> Path:
    """Set one key of the user file, every other key kept as it is, written atomically (the first
    run's model pick, clients/terminal/first_run.py). A file that does not parse is never
    replaced: SettingsFileError says which and why."""
    from .state.atomic import SMALL_MAX_BYTES, write_atomic  # noqa: PLC0415 - only when something is kept

    path = user_settings_path().resolve()  # a symlinked file (dotfiles) is written where it points
    problems: list[str] = []
    data = _read(path, problems) if path.exists() else {}
    if data is None:
        raise SettingsFileError(problems[0].removesuffix("; ignored") + "; fix it, then run `shiro setup` again")
    data[name] = value
    body = json.dumps(data, indent=2, ensure_ascii=False).encode() + b"\n"
    if len(body) > SMALL_MAX_BYTES:
        raise SettingsFileError(f"{path}: would be over {SMALL_MAX_BYTES} bytes; not written")
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    write_atomic(path, body, mode=mode)
    return path


def merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """`update` over `base`, objects merged key by key (a nested setting overrides only itself)."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def _with_user_rules(project: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    """A trusted project's settings with its `permissions` lists joined to the user's (the user's
    first), not replacing them: a project's rules add to the user's deny rules, never drop them."""
    rules, mine = project.get("permissions"), user.get("permissions")
    if not isinstance(rules, dict) or not isinstance(mine, dict):
        return project
    joined = dict(rules)
    for kind, theirs in rules.items():
        if isinstance(theirs, list) and isinstance(mine.get(kind), list):
            joined[kind] = [*mine[kind], *(r for r in theirs if r not in mine[kind])]
    return {**project, "permissions": joined}


def _read(path: Path, problems: list[str]) -> dict[str, Any] | None:
    from .state.atomic import SMALL_MAX_BYTES, StateError, read_state_file  # msgspec: only when there is a file

    try:
        read = read_state_file(path, SMALL_MAX_BYTES)  # a FIFO or /dev/zero link never blocks or fills memory
        if read is None:
            return None
        text = read[0].decode("utf-8")
    except (OSError, UnicodeDecodeError, StateError) as exc:
        problems.append(f"{path}: cannot be read ({exc}); ignored")
        return None
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc}); ignored")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: holds {type(data).__name__}, not a settings object; ignored")
        return None
    return data


def load_user_settings(workspace: Path | None = None, trust: TrustLookup | None = None) -> UserSettings:
    """The user's file, then what the project's may set over it (see the module docstring).
    Without `trust` nothing of the project's is trusted."""
    out = UserSettings()
    user_path = user_settings_path()
    user = _read(user_path, out.problems)
    if user is not None:
        out.settings = user
        out.files.append(user_path)
    if workspace is not None:
        for held in project_files(workspace, out.settings, out.problems):
            if trust is not None and held.keys:
                held.decision = trust(held.name, held.sha256)
            trusted = held.decision == "trusted"
            if held.view is not None:  # the settings file
                out.settings = merge(out.settings, held.view.safe)
                if trusted:
                    out.settings = merge(out.settings, _with_user_rules(held.view.waiting, out.settings))
                out.files.append(workspace / held.name)
            if held.keys and not trusted:
                out.held.append(held)
    return out
