"""Where "Always allow" puts a rule the user chose to keep (docs/protocol.md "Permission rules").

- "workspace": `$SHIRO_NEKO_HOME/permissions.json`, per workspace key. It is the user's own
  record in the state home, never a file of the repository: a cloned repository cannot plant a
  rule there, so these rules apply without the trust step (a project's own rules in
  `.shiro-neko/settings.json` still wait for it, project_settings.py).
- "user": the user settings file (user_settings.py `user_settings_path`), its `permissions` key;
  every other key is kept as it was.

Both are read-modify-written under a cross-process lock (two servers answering "Always allow" at
once keep both rules) and replaced atomically (a crash leaves the old file or the new one).
Reads are cached by the file's stat, so a check per tool call costs one `stat`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..project_settings import read_project_file
from .atomic import SMALL_MAX_BYTES, CorruptFile, file_lock, read_json_or_corrupt, write_atomic

Kind = Literal["allow", "ask", "deny"]
KINDS: tuple[Kind, ...] = ("allow", "ask", "deny")
STORE_FILE = "permissions.json"
MAX_RULES = 1000  # per workspace and kind: "Always allow" cannot grow a file without bound


class RuleLists(msgspec.Struct, omit_defaults=True):
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class WorkspaceRules(RuleLists, omit_defaults=True):
    path: str = ""  # the folder, for a person reading the file


class RuleRecord(msgspec.Struct, omit_defaults=True):
    version: int = 1
    workspaces: dict[str, WorkspaceRules] = {}


_decoder = msgspec.json.Decoder(RuleRecord)
Stamp = tuple[int, int, int]  # (inode, size, mtime_ns): a file changed by another process reads anew


def _stamp(path: Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _stamp_mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return None


def _lists(raw: Any) -> RuleLists:
    """The `permissions` object of a settings file as rule lists; what is not a list of strings is skipped."""
    if not isinstance(raw, dict):
        return RuleLists()
    out = RuleLists()
    for kind in KINDS:
        value = raw.get(kind)
        if isinstance(value, list):
            setattr(out, kind, [r for r in value if isinstance(r, str)])
    return out


def _add(lists: RuleLists, kind: Kind, rules: list[str]) -> None:
    current = getattr(lists, kind)
    for rule in rules:
        if rule not in current:
            current.append(rule)
    del current[: max(0, len(current) - MAX_RULES)]


class WorkspaceRuleStore:
    """`$SHIRO_NEKO_HOME/permissions.json`: the user's rules for one workspace each."""

    def __init__(self, home: Path) -> None:
        self.path = home / STORE_FILE
        self._lock = home / f".{STORE_FILE}.lock"
        self._cache: tuple[Stamp | None, RuleRecord] | None = None

    def _read(self) -> RuleRecord:
        stamp = _stamp(self.path)
        if self._cache is not None and stamp is not None and self._cache[0] == stamp:
            return self._cache[1]
        try:
            record = read_json_or_corrupt(self.path, _decoder, max_bytes=SMALL_MAX_BYTES) or RuleRecord()
        except CorruptFile:  # copied aside and warned about: the workspace rules start over
            record = RuleRecord()
        self._cache = (stamp, record)
        return record

    def rules(self, key: str) -> RuleLists:
        entry = self._read().workspaces.get(key)
        return entry if entry is not None else RuleLists()

    def add(self, key: str, root: Path, kind: Kind, rules: list[str]) -> None:
        with file_lock(self._lock):
            self._cache = None
            record = self._read()
            entry = record.workspaces.get(key) or WorkspaceRules(path=str(root))
            _add(entry, kind, rules)
            record.workspaces[key] = entry
            write_atomic(self.path, msgspec.json.encode(record))
            self._cache = None

    def remove(self, key: str, kinds: tuple[Kind, ...], rule: str) -> bool:
        with file_lock(self._lock):
            self._cache = None
            record = self._read()
            entry = record.workspaces.get(key)
            if entry is None or not any(rule in getattr(entry, k) for k in kinds):
                return False
            for kind in kinds:
                setattr(entry, kind, [r for r in getattr(entry, kind) if r != rule])
            write_atomic(self.path, msgspec.json.encode(record))
            self._cache = None
            return True


class UserRuleFile:
    """The user settings file's `permissions` (the file user_settings.py reads for the terminal and ACP)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Beside the file: every process that edits this settings file takes the same lock.
        self._lock = path.parent / f".{path.name}.lock"
        self._cache: tuple[Stamp | None, RuleLists] | None = None

    def rules(self) -> RuleLists:
        stamp = _stamp(self.path)
        if self._cache is not None and self._cache[0] == stamp:
            return self._cache[1]
        try:
            data = self._load()
        except (OSError, ValueError):  # named by the clients that read the whole file; no rules from it here
            data = {}
        lists = _lists(data.get("permissions"))
        self._cache = (stamp, lists)
        return lists

    def _load(self) -> dict[str, Any]:
        # The user's own file, not a state file: a symlink (dotfiles) is followed, never set aside.
        raw = read_project_file(self.path)
        text = raw.decode("utf-8") if raw is not None else ""
        data: Any = json.loads(text) if text.strip() else {}
        if not isinstance(data, dict):
            raise ValueError(f"{self.path} holds no settings object; fix or remove it, then try again")
        return data

    def _edit(self, change: Any) -> bool:
        """Read, change (a function of the `permissions` object, answering whether it changed), write."""
        with file_lock(self._lock):
            try:
                data = self._load()
            except UnicodeDecodeError as exc:
                raise ValueError(f"{self.path} is not UTF-8 text ({exc}); fix or remove it, then try again") from None
            except json.JSONDecodeError as exc:
                raise ValueError(f"{self.path} is not valid JSON ({exc}); fix or remove it, then try again") from None
            section = data.setdefault("permissions", {})
            if not isinstance(section, dict):
                raise ValueError(f"{self.path}: permissions is not an object of rule lists; fix it, then try again")
            for kind in KINDS:
                if kind in section and not isinstance(section[kind], list):
                    raise ValueError(f"{self.path}: permissions.{kind} is not a list of rules; fix it, then try again")
            if not change(section):
                return False
            target = self.path.resolve()  # a symlinked settings file stays a link: its target is written
            # The user's file, not a state file: its mode kept, its folder made as `mkdir -p` would.
            write_atomic(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode(),
                         mode=_stamp_mode(target), private=False)
            self._cache = None
            return True

    def add(self, kind: Kind, rules: list[str]) -> None:
        def change(section: dict[str, Any]) -> bool:
            current = section.setdefault(kind, [])
            new = [r for r in rules if r not in current]
            current.extend(new)
            return bool(new)

        self._edit(change)

    def remove(self, kinds: tuple[Kind, ...], rule: str) -> bool:
        def change(section: dict[str, Any]) -> bool:
            found = False
            for kind in kinds:
                if rule in section.get(kind, []):
                    section[kind] = [r for r in section[kind] if r != rule]
                    found = True
            return found

        return self._edit(change)
