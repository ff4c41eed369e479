"""The workspace trust record, `$SHIRO_NEKO_HOME/trust.json` (docs/protocol.md "Workspace trust").

One record for every project file the user was asked about (`.shiro-neko/settings.json`,
`.mcp.json`, an editor's workspace-level MCP servers): per workspace key, per file, the SHA-256
of the content the user answered about and the answer, never the content (`env` and `headers`
may hold secrets). A changed file has no answer: it is untrusted and asked about again.

The record lives in the user's state home, which nothing in a workspace may write: a record
found inside the workspace it would vouch for is ignored (a command of that workspace could have
forged it). It replaces `mcp-trust.json`, whose answers about `.mcp.json` are carried over once.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Literal

import msgspec

from .atomic import SMALL_MAX_BYTES, CorruptFile, file_lock, read_json_or_corrupt, utc_digits, write_atomic

log = logging.getLogger(__name__)

TRUST_FILE = "trust.json"
LEGACY_FILE = "mcp-trust.json"  # before trust.json: answers about `.mcp.json` alone
LEGACY_NAME = ".mcp.json"

Decision = Literal["trusted", "declined"]
Lookup = Callable[[str, str], "Decision | None"]


class FileTrust(msgspec.Struct, omit_defaults=True):
    sha256: str
    decision: Decision
    decidedAt: str = ""


class WorkspaceTrust(msgspec.Struct, omit_defaults=True):
    path: str = ""  # the folder, for a person reading the file
    files: dict[str, FileTrust] = {}


class TrustRecord(msgspec.Struct, omit_defaults=True):
    version: int = 1
    workspaces: dict[str, WorkspaceTrust] = {}


class _LegacyEntry(msgspec.Struct):
    sha256: str
    decision: Decision
    decidedAt: str = ""


class _LegacyRecord(msgspec.Struct):
    workspaces: dict[str, _LegacyEntry] = {}


_decoder = msgspec.json.Decoder(TrustRecord)
_legacy_decoder = msgspec.json.Decoder(_LegacyRecord)


def read_record(path: Path) -> TrustRecord | None:
    """The record on disk (None: there is none). The one place it is read, so the safe reading
    of state files can replace it; a damaged record is copied aside and counts as empty."""
    try:
        return read_json_or_corrupt(path, _decoder, max_bytes=SMALL_MAX_BYTES)
    except CorruptFile:  # warned about and kept aside: every project file is asked about again
        return TrustRecord()


def _migrated(legacy: Path) -> TrustRecord | None:
    """mcp-trust.json's answers as trust.json's. Its hash was of `.mcp.json`'s bytes (joined with
    the settings file's servers when that had any: those no longer match and are asked again)."""
    try:
        old = read_json_or_corrupt(legacy, _legacy_decoder, max_bytes=SMALL_MAX_BYTES)
    except CorruptFile:
        return None
    if old is None:
        return None
    return TrustRecord(workspaces={
        key: WorkspaceTrust(files={LEGACY_NAME: FileTrust(e.sha256, e.decision, e.decidedAt)})
        for key, e in old.workspaces.items()
    })


def _inside(path: Path, root: Path) -> bool:
    try:
        resolved, base = path.resolve(), root.resolve()
    except OSError:
        return True  # cannot tell: trust nothing
    return resolved == base or base in resolved.parents


class TrustStore:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / TRUST_FILE
        self._lock = home / f".{TRUST_FILE}.lock"

    def _read(self) -> TrustRecord:
        record = read_record(self.path)
        if record is not None:
            return record
        if not (self.home / LEGACY_FILE).exists():
            return TrustRecord()
        with file_lock(self._lock):  # carried over once, by whichever process comes first
            return self._read_locked()

    def _read_locked(self) -> TrustRecord:
        record = read_record(self.path)
        if record is not None:
            return record
        legacy = self.home / LEGACY_FILE
        record = _migrated(legacy) if legacy.exists() else None
        if record is None:
            return TrustRecord()
        write_atomic(self.path, msgspec.json.encode(record))
        try:
            legacy.unlink()  # absorbed: one record from now on
        except OSError:
            pass
        return record

    def lookup(self, key: str, root: Path) -> Lookup:
        """Answers for workspace `key` (folder `root`), read once: `(file, sha256) -> decision`."""
        if _inside(self.path, root):
            log.warning("the trust record %s lies inside the workspace %s: nothing there is trusted", self.path, root)
            return lambda name, sha: None
        files = self._read().workspaces.get(key, WorkspaceTrust()).files

        def decision(name: str, sha: str) -> Decision | None:
            entry = files.get(name)
            return entry.decision if entry is not None and entry.sha256 == sha else None

        return decision

    def record(self, key: str, root: Path, files: dict[str, str], decision: Decision) -> None:
        """The user's answer about these files' contents (name -> sha256)."""
        if not files:
            return
        # Under the lock: two processes on one machine must not drop each other's answers.
        with file_lock(self._lock):
            record = self._read_locked()
            entry = record.workspaces.get(key) or WorkspaceTrust(path=str(root))
            entry.path = str(root)
            at = utc_digits()
            entry.files = {**entry.files, **{name: FileTrust(sha, decision, at) for name, sha in files.items()}}
            record.workspaces[key] = entry
            write_atomic(self.path, msgspec.json.encode(record))
