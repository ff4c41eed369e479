"""One project-memory entry, as the memory file and `shiro.notes` / `remember` / `recall` hold it."""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

MemoryKind = Literal["fact", "decision", "gotcha", "command"]
KINDS: tuple[str, ...] = get_args(MemoryKind)


class MemoryEntry(msgspec.Struct, rename="camel", omit_defaults=True):
    kind: MemoryKind
    text: str
    hits: int
    created_at: str
    last_used_at: str | None = None
    session_id: str | None = None  # the session whose `remember` wrote it (absent: a command, or older files)
