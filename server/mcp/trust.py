"""Trust in a project's `.mcp.json`: the user's answer per workspace, kept as a hash of the file.

A project file can start any command on the user's machine, so its servers run only after the
user said yes to that exact content. The record holds the SHA-256 of the file and the answer,
never the file (whose `env` and `headers` may hold secrets); an edited file is asked about again.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Literal

import msgspec

from ..state.atomic import SMALL_MAX_BYTES, CorruptFile, file_lock, read_json_or_corrupt, utc_digits, write_atomic

log = logging.getLogger(__name__)

PROJECT_FILE = ".mcp.json"
TRUST_FILE = "mcp-trust.json"

Decision = Literal["trusted", "declined"]


class TrustEntry(msgspec.Struct, omit_defaults=True):
    sha256: str
    decision: Decision
    decidedAt: str = ""


class TrustRecord(msgspec.Struct, omit_defaults=True):
    workspaces: dict[str, TrustEntry] = {}


_decoder = msgspec.json.Decoder(TrustRecord)


def file_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class TrustStore:
    def __init__(self, home: Path) -> None:
        self.path = home / TRUST_FILE
        self._lock = home / f".{TRUST_FILE}.lock"

    def _read(self) -> TrustRecord:
        try:
            return read_json_or_corrupt(self.path, _decoder, max_bytes=SMALL_MAX_BYTES) or TrustRecord()
        except CorruptFile:  # copied aside and warned about: every project file is asked about again
            return TrustRecord()

    def decision(self, workspace_key: str, sha256: str) -> Decision | None:
        """The user's answer for this exact file content, or None when never asked about it."""
        entry = self._read().workspaces.get(workspace_key)
        return entry.decision if entry is not None and entry.sha256 == sha256 else None

    def remember(self, workspace_key: str, sha256: str, decision: Decision) -> None:
        # Under the lock: two servers on one machine must not drop each other's answers.
        with file_lock(self._lock):
            record = self._read()
            record.workspaces[workspace_key] = TrustEntry(sha256, decision, utc_digits())
            write_atomic(self.path, msgspec.json.encode(record))
