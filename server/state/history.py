"""Prompt history of one workspace: `history/<key>.json`, a JSON list of strings, newest last.

Capped at 200 and deduplicated against the previous entry only (seed: "Prompt history"). Two
servers on one workspace both append, so `add` is lock, re-read, append, atomic write: neither
ever writes back a stale copy over the other's prompts.
"""

from __future__ import annotations

import threading
from pathlib import Path

import msgspec

from .atomic import CorruptFile, StateError, file_lock, read_json_or_corrupt, write_atomic
from .paths import history_file

CAP = 200

_decoder = msgspec.json.Decoder(list[str])
_encoder = msgspec.json.Encoder()


class PromptHistory:
    def __init__(self, home: Path, key: str) -> None:
        self.path = history_file(Path(home), key)
        self.lock_path = self.path.with_name(f"{key}.lock")
        self._mutex = threading.Lock()  # threads of one process; the file lock covers processes

    def load(self) -> list[str]:
        """The prompts, oldest first; empty when there is no file or it is corrupt (copied aside)."""
        try:
            prompts = read_json_or_corrupt(self.path, _decoder)
        except CorruptFile:
            return []
        return (prompts or [])[-CAP:]

    def add(self, prompt: str) -> None:
        """Append `prompt` unless it is blank or equals the newest entry."""
        if not prompt.strip():
            return
        with self._mutex, file_lock(self.lock_path):
            try:
                prompts = read_json_or_corrupt(self.path, _decoder) or []
            except CorruptFile as exc:
                if exc.copy is None:  # never replace a corrupt file whose copy does not exist
                    raise StateError(f"prompt history not saved: {exc}") from exc
                prompts = []
            if prompts and prompts[-1] == prompt:
                return
            prompts.append(prompt)
            write_atomic(self.path, _encoder.encode(prompts[-CAP:]))
