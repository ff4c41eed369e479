"""`/resume` with no id: a picker over this directory's sessions (docs/terminal.md, "Sessions").

While it is open the input line is its search: every change asks `shiro.sessions {query}` (after
a short pause, the newest answer wins), an empty line lists the newest sessions. The rows are shown
above the input, each with its short id (the shortest unique prefix, SessionSummary.shortId) and,
when searching, the passage that matched. ↑/↓ move, Enter resumes the highlighted one (or row N
when the line is just that number), Del deletes the highlighted one after a `y`, Esc closes (Ctrl-X
would wait for the key after it: Emacs mode binds Ctrl-X sequences).
Everything shown from a session (titles, snippets) is untrusted text: made visible, never sent raw.

Also `/rename <title>` and `/export [path]` of the session in use.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Callable

from prompt_toolkit.formatted_text import StyleAndTextTuples

from .. import protocol as wire
from ..model.visible_text import visible
from . import render

Command = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

ROWS = 10
PAUSE_S = 0.12  # typing pause before a search is sent
HINT = "type to search · ↑/↓ move · Enter resumes (or N Enter) · Del deletes · Esc closes"


class SessionPicker:
    def __init__(self, command: Command, say: Callable[..., None], redraw: Callable[[], None]) -> None:
        self.command, self.say, self.redraw = command, say, redraw
        self.open = False
        self.query = ""
        self.rows: list[dict[str, Any]] = []
        self.selected = 0
        self.confirm: dict[str, Any] | None = None  # the row Del asked to delete, waiting for `y`
        self.error = ""
        self.loading = False  # the first answer has not come yet
        self._search: asyncio.Task[None] | None = None
        self._asked = 0  # the newest search's number: an older answer arriving late is dropped

    # -- state ----------------------------------------------------------------------------
    def start(self) -> None:
        self.open, self.query, self.rows, self.selected, self.confirm, self.error = True, "", [], 0, None, ""
        self.loading = True
        self.typed("", pause=0.0)

    def close(self) -> None:
        self.open, self.confirm = False, None
        if self._search is not None:
            self._search.cancel()
        self.redraw()

    def typed(self, text: str, pause: float = PAUSE_S) -> None:
        """The input line changed: search for it (the last change in a pause wins)."""
        if not self.open or (text == self.query and self.rows and pause):
            return
        self.query = text
        if self._search is not None:
            self._search.cancel()
        self._asked += 1
        self._search = asyncio.ensure_future(self._load(text, self._asked, pause))

    async def _load(self, text: str, asked: int, pause: float) -> None:
        if pause:
            await asyncio.sleep(pause)
        args: dict[str, Any] = {"limit": ROWS}
        if text.strip():
            args["query"] = text
        try:
            result = await self.command(wire.SESSIONS, args)
            rows, error = [r for r in result.get("sessions") or [] if isinstance(r, dict)], ""
        except Exception as exc:  # noqa: BLE001 - a failed search is said in the picker, which stays open
            rows, error = [], str(exc)
        if asked != self._asked or not self.open:
            return
        self.rows, self.error, self.selected, self.loading = rows, error, 0, False
        self.redraw()

    def move(self, delta: int) -> None:
        if self.rows:
            self.selected = (self.selected + delta) % len(self.rows)
            self.redraw()

    def choice(self, text: str) -> str | None:
        """The id Enter picks: row N when the line is just N, else the highlighted row."""
        typed = text.strip()
        if typed.isdigit() and 1 <= int(typed) <= len(self.rows):
            return str(self.rows[int(typed) - 1].get("id"))
        if self.rows:
            return str(self.rows[self.selected].get("id"))
        return None

    def ask_delete(self) -> None:
        if self.rows:
            self.confirm = self.rows[self.selected]
            self.redraw()

    async def delete(self) -> None:
        row, self.confirm = self.confirm, None
        if row is None:
            return
        try:
            await self.command(wire.DELETE_SESSION, {"id": row.get("id")})
        except Exception as exc:  # noqa: BLE001 - refused (open elsewhere): said, the picker stays
            self.error = str(exc)
            self.redraw()
            return
        self.say([("green", "deleted "), ("", f'"{render.one_line(row.get("title") or "(untitled)", 60)}"'),
                  ("dim", f"  {row.get('shortId') or row.get('id')}")])
        self.typed(self.query, pause=0.0)

    # -- drawing --------------------------------------------------------------------------
    def fragments(self) -> StyleAndTextTuples:
        """The rows and the hint above the input line; the input line's own mark last."""
        out: StyleAndTextTuples = [("class:bold", "resume a session"), ("class:dim", f"  {HINT}\n")]
        width = max((len(str(r.get("shortId") or r.get("id") or "")) for r in self.rows), default=8)
        for n, row in enumerate(self.rows, 1):
            chosen = n - 1 == self.selected
            mark = "›" if chosen else " "
            short = str(row.get("shortId") or row.get("id") or "")
            count = int(row.get("messageCount") or 0)
            out += [("class:cyan" if chosen else "", f"{mark}{n:>2} "), ("class:cyan", f"{short:<{width}}"),
                    ("class:dim", f"  {render.when(row.get('updatedAt'))}  {count:>4} msg  "),
                    ("class:bold" if chosen else "", visible(render.one_line(row.get("title") or "(untitled)", 60))), ("", "\n")]
            if row.get("snippet"):
                out += [("class:dim", f"     {' ' * width}  {visible(render.one_line(str(row['snippet']), 100))}\n")]
        if self.loading:
            out.append(("class:dim", "  …\n"))
        elif not self.rows and not self.error:
            out.append(("class:dim", "  no session matches\n" if self.query.strip() else "  no saved sessions in this directory yet\n"))
        if self.error:
            out.append(("class:red", f"  {visible(render.one_line(self.error, 200))}\n"))
        if self.confirm is not None:
            title = render.one_line(self.confirm.get("title") or "(untitled)", 60)
            return out + [("class:yellow", visible(f'delete "{title}"? y deletes, any other key keeps it › '))]
        return out + [("class:prompt-mark", "search › ")]


async def rename_lines(command: Command, session_id: str | None, title: str) -> list[render.Line]:
    """`/rename <title>`: this session's new title."""
    if not title.strip():
        return [[("yellow", "usage: /rename <title>")]]
    if session_id is None:
        return [[("yellow", "no session yet: send a prompt first")]]
    result = await command(wire.RENAME_SESSION, {"id": session_id, "title": title})
    return [[("green", "renamed "), ("", f'"{result.get("title")}"')]]


async def export_lines(command: Command, session_id: str | None, target: str, cwd: Path) -> list[render.Line]:
    """`/export [path]`: this session as Markdown, into a file (written whole, never half) or shown."""
    if session_id is None:
        return [[("yellow", "no session yet: send a prompt first")]]
    text = str((await command(wire.EXPORT_SESSION, {"id": session_id, "format": "markdown"})).get("text") or "")
    if not target:
        return [[("", line)] for line in text.splitlines()]
    path = (cwd / Path(target).expanduser()).resolve()
    try:
        await asyncio.to_thread(_write_whole, path, text)
    except OSError as exc:
        return [[("red", f"/export: {path}: {exc.strerror or exc}")]]
    return [[("green", "exported to "), ("", str(path))]]


def _write_whole(path: Path, text: str) -> None:
    """Beside the target first, then renamed over it: a reader never sees half an export."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
