"""Checks over a whole SHIRO_NEKO_HOME, shared by the fault, concurrency and load tests."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from shiro_neko.startup import codegen_cache

# The checkpoint stores are git repositories (binary objects): git checks them, not this walk.
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "PATH": "/usr/bin:/bin"}


def every_state_file_parses(home: Path) -> int:
    """Each file under the home decodes: JSON whole, JSON Lines per line, the short-term memory
    database passes SQLite's integrity check, the generated-code cache reads whole, the rest is UTF-8. A save's leftover temp file and
    SQLite's own journal files are not state files; each checkpoint store passes `git fsck`.
    Returns how many files were checked."""
    checked = 0
    stores = home / "checkpoints"
    for store in sorted(stores.glob("*/git")) if stores.is_dir() else []:
        fsck = subprocess.run(["git", "--git-dir", str(store), "fsck", "--strict"], capture_output=True, text=True, env=_GIT_ENV)
        assert fsck.returncode == 0, (store, fsck.stderr)
        checked += 1
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        if path.name.endswith((".tmp", "-wal", "-shm", "-journal")) or stores in path.parents:
            continue
        data = path.read_bytes()
        if path.suffix == ".json":
            json.loads(data)
        elif path.suffix == ".jsonl":
            [json.loads(line) for line in data.splitlines() if line.strip()]
        elif path.suffix == ".sqlite3":
            with sqlite3.connect(path) as conn:  # as the next server would open it (WAL recovered)
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", path
        elif path.suffix == ".marshal":  # the generated-code cache: whole, or it would be a miss
            assert codegen_cache.read(path), path
        elif path.suffix != ".lock" and ".corrupt-" not in path.name:
            data.decode("utf-8")
        checked += 1
    return checked
