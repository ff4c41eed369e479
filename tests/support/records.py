"""`new_record`: an empty session record for the store and index tests."""

from __future__ import annotations

from pathlib import Path

from shiro_neko.model.ids import new_uuid7
from shiro_neko.model.timestamps import iso_utc
from shiro_neko.state.session_record import SessionRecord


def new_record(cwd: str | Path, provider: str, model: str) -> SessionRecord:
    """An empty session; it is not written until it holds a message."""
    now = iso_utc()
    return SessionRecord(
        id=new_uuid7(), created_at=now, updated_at=now, cwd=str(Path(cwd).resolve()), provider=provider, model=model
    )
