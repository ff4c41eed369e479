"""Permission rules by where they come from: list, add ("Always allow"), remove (`/permissions`).

The rules a call is judged by (agent/permissions.py `decide`) are, joined per list:

- the client's `permissions` setting (the terminal and ACP send the user settings file's and,
  once trusted, the project's; an editor sends its own `shiro.permissions`);
- the user settings file's `permissions`, read by the server itself, so a rule "Always allow"
  wrote for the user applies in every client at once (state/permission_store.py `UserRuleFile`);
- the workspace's rules in the state home (`WorkspaceRuleStore`), the user's own: no trust step;
- the session's rules (`AgentSession.permission_rules`, allow only, gone with the session).

A rule the user removed from their file is also dropped from what the client sent at its start
(the terminal read the file before the removal) for as long as this server runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Literal

from ..config import PermissionSettings
from ..errors import InvalidArguments, Refused
from ..project_settings import SETTINGS_FILE, leaves, read_project_file
from ..protocol import PermissionRule, PermissionsResult, RuleDecision, RuleSource
from ..state.permission_store import KINDS, Kind, RuleLists, UserRuleFile, WorkspaceRuleStore

if TYPE_CHECKING:
    from ..agent.session import AgentSession


def _joined(*sources: PermissionSettings | RuleLists) -> PermissionSettings:
    out = PermissionSettings()
    for kind in KINDS:
        setattr(out, kind, list(dict.fromkeys(r for s in sources for r in getattr(s, kind))))
    return out


def _project_rules(root: Path) -> set[str]:
    """The rules the workspace's own settings file holds (to name them "project" in a listing)."""
    try:
        data = read_project_file(root / SETTINGS_FILE)
        raw = json.loads(data) if data else {}
    except (OSError, ValueError):
        return set()
    flat, _ = leaves(raw)
    return {r for kind in KINDS if isinstance(flat.get(f"permissions.{kind}"), list)
            for r in flat[f"permissions.{kind}"] if isinstance(r, str)}


class PermissionRulesFeature:
    def __init__(self, home: Callable[[], Path], user_file: Callable[[], Path]) -> None:
        self._home = home
        self._user_file = user_file
        self._stores: dict[Path, WorkspaceRuleStore] = {}
        self._users: dict[Path, UserRuleFile] = {}
        # Rules removed from the user file while the client's copy (read at its start) still holds them.
        self._removed: set[tuple[str, str]] = set()

    def _store(self) -> WorkspaceRuleStore:
        home = self._home()
        store = self._stores.get(home)
        if store is None:
            store = self._stores[home] = WorkspaceRuleStore(home)
        return store

    def _user(self) -> UserRuleFile:
        path = self._user_file()
        user = self._users.get(path)
        if user is None:
            user = self._users[path] = UserRuleFile(path)
        return user

    def _client(self, sent: PermissionSettings) -> PermissionSettings:
        if not self._removed:
            return sent
        out = PermissionSettings()
        for kind in KINDS:
            setattr(out, kind, [r for r in getattr(sent, kind) if (kind, r) not in self._removed])
        return out

    def effective(self, sent: PermissionSettings, key: str) -> PermissionSettings:
        """Every rule but the session's, for one workspace (a stat of each file per call)."""
        return _joined(self._client(sent), self._user().rules(), self._store().rules(key))

    def save(self, session: "AgentSession", key: str, rules: list[str], scope: str) -> None:
        """An "Always allow" for the workspace or the user: written at once (OSError/ValueError
        when the file cannot be, for the caller to say)."""
        if scope == "workspace":
            self._store().add(key, session.root, "allow", rules)
        else:
            self._user().add("allow", rules)
            self._removed -= {("allow", r) for r in rules}

    def listing(self, sent: PermissionSettings, session: "AgentSession", key: str) -> PermissionsResult:
        user, workspace = self._user().rules(), self._store().rules(key)
        project = _project_rules(session.root)
        client = self._client(sent)
        out: list[PermissionRule] = []
        seen: set[tuple[str, str, str]] = set()

        def add(rule: str, decision: Kind, scope: RuleSource) -> None:
            if (rule, decision, scope) not in seen:
                seen.add((rule, decision, scope))
                out.append(PermissionRule(rule=rule, decision=decision, scope=scope))

        for kind in KINDS:
            for rule in getattr(user, kind):
                add(rule, kind, "user")
            for rule in getattr(client, kind):
                if rule not in getattr(user, kind):
                    # Not in the user's file: the trusted project's, or the editor's own setting.
                    add(rule, kind, "project" if rule in project else "user")
            for rule in getattr(workspace, kind):
                add(rule, kind, "workspace")
        for rule in session.permission_rules:
            add(rule, "allow", "session")
        return PermissionsResult(rules=out, userFile=str(self._user().path), workspaceFile=str(self._store().path))

    def remove(self, sent: PermissionSettings, session: "AgentSession", key: str, rule: str,
               scope: RuleSource, decision: RuleDecision | None) -> bool:
        kinds: tuple[Kind, ...] = (decision,) if decision is not None else KINDS
        if scope == "session":
            if "allow" not in kinds or rule not in session.permission_rules:
                return False
            session.permission_rules.remove(rule)
            return True
        if scope == "workspace":
            return self._store().remove(key, kinds, rule)
        if scope == "project":
            raise Refused(f"{rule} is the project's rule ({session.root / SETTINGS_FILE}, the repository's file): "
                          "edit that file to remove it (a changed file is asked about again before it applies)")
        try:
            removed = self._user().remove(kinds, rule)
        except ValueError as exc:
            raise InvalidArguments(str(exc)) from None
        in_client = [k for k in kinds if rule in getattr(self._client(sent), k)]
        if not removed and in_client and rule not in _project_rules(session.root):
            # Sent by an editor from its own settings, never in our file: only the editor can drop it.
            raise Refused(f"{rule} comes from your editor's `shiro.permissions` setting, not {self._user().path}: "
                          "remove it there")
        self._removed |= {(k, rule) for k in in_client}
        return removed or bool(in_client)
