"""Where state lives on disk (docs/state-files.md)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def shiro_home() -> Path:
    """`$SHIRO_NEKO_HOME`, else platformdirs' user data directory."""
    env = os.environ.get("SHIRO_NEKO_HOME")
    if env:
        return Path(env)
    import platformdirs  # deferred: only needed when no override is set

    return platformdirs.user_data_path("shiro-neko")


def workspace_key(folder: str | os.PathLike[str]) -> str:
    """First 16 hex digits of SHA-256 over the resolved absolute path's UTF-8 bytes."""
    resolved = str(Path(folder).resolve())
    return hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:16]


def sessions_dir(home: Path) -> Path:
    return home / "sessions"


def memory_file(home: Path, key: str) -> Path:
    return home / "memory" / f"{key}.json"


def history_file(home: Path, key: str) -> Path:
    return home / "history" / f"{key}.json"
