"""Skills and custom commands in the terminal's `/` menu (docs/extending.md): `shiro.commands`
lists them; the completer offers them after the built-in commands, `/help` names them, and a
line `/name args` for one of them is sent as a prompt, which the server expands for the model."""

from __future__ import annotations

from .. import protocol as wire
from ..model.visible_text import visible
from .connection import CommandError, Connection, ServerGone


async def load(conn: Connection, builtin: set[str]) -> dict[str, str]:
    """`/name` -> what the menu shows beside it, for each skill and custom command not named like a
    built-in one; {} when the server cannot say (an older one, or it is gone)."""
    try:
        rows = (await conn.command(wire.SLASH_COMMANDS, {})).get("commands", [])
    except (CommandError, ServerGone):
        return {}
    out: dict[str, str] = {}
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or row.get("source") == "builtin":
            continue
        name = f"/{row.get('name', '')}"
        if name in builtin or " " in name:
            continue
        hint = f"{row['argumentHint']} · " if row.get("argumentHint") else ""
        # visible(): names and descriptions are files' text (model/visible_text.py)
        out[visible(name)] = visible(f"{hint}{row.get('description', '')} ({row.get('source')})")
    return out
