"""Project instruction files (AGENTS.md, else CLAUDE.md) for the context messages
(agent/context_messages.py: one section per file).

Read from the workspace root and from every directory between the root and each file the agent
works on, root first and the nearest directory last, so the most specific instructions come last
and read as overriding the general ones. Per directory, `AGENTS.md` wins and `CLAUDE.md` is the
fallback for projects that only have that one.

The total is capped at 32 KiB (UTF-8 bytes, the note included) because it is part of every
request. When the cap is hit, the end is cut (the nearest, most specific files go first: the root's
general rules are what every request needs) and a note says so, naming what was left out, so the
model knows it is not seeing everything and can read the rest with read_file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from . import workspace_fs

CAP_BYTES = 32 * 1024
FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
# Room kept for the truncation note; the note is built to stay under it.
_NOTE_ROOM = 600


def _dirs(root: Path, touched: Iterable[Path]) -> list[str]:
    """Root-relative directories: the root first, then each touched file's chain in order, each once.

    Lexical (no realpath): the files are read beneath the root's descriptor, which follows the
    links that stay inside and refuses the others, even when they are swapped while it reads."""
    ordered: list[str] = ["."]
    for path in touched:
        try:
            rel = workspace_fs.relative_to_root(root, root / path)  # `root / absolute` is the absolute path
        except workspace_fs.OutsideWorkspace:
            continue  # outside the workspace: its instructions are not this project's
        parts = rel.split("/") if rel != "." else []
        # A touched path is a file the agent worked on; its directory's chain is what counts.
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth]) or "."
            if directory not in ordered:
                ordered.append(directory)
    return ordered


def _instruction_file(root: Path, directory: str) -> tuple[str, bytes] | None:
    """The first instruction file of `directory` and its first bytes, read beneath the root's
    descriptor (`workspace_fs`): an AGENTS.md that is a link out of the workspace, or becomes one
    while it is read, is not an instruction file of this project; a FIFO is not one either."""
    for name in FILE_NAMES:
        candidate = name if directory == "." else f"{directory}/{name}"
        try:
            # More than the cap could never be shown anyway.
            return candidate, workspace_fs.read_bytes(root, candidate, max_bytes=CAP_BYTES)
        except OSError:
            continue  # missing, outside, not a regular file or unreadable: the next name, or none
    return None


def instruction_sections(root: Path, touched: Iterable[Path] = ()) -> list[tuple[str, str]]:
    """(file label, text) per instruction file, root first and nearest last, as context messages
    carry them (agent/context_messages.py: one section per file, so a file found later is sent
    alone). Within CAP_BYTES in total like `collect_instructions`: the file the cap reaches is cut
    at a line and ends with the note naming what was left out; later files are not returned."""
    root = Path(os.path.abspath(root))
    found_sections: list[tuple[str, str]] = []
    for directory in _dirs(root, touched):
        found = _instruction_file(root, directory)
        if found is not None:
            text = found[1].decode("utf-8", errors="replace").strip()
            if text:
                found_sections.append((found[0], text))
    budget = CAP_BYTES - _NOTE_ROOM
    used = 0
    out: list[tuple[str, str]] = []
    for index, (label, text) in enumerate(found_sections):
        size = len(text.encode("utf-8"))
        if used + size <= budget:
            out.append((label, text))
            used += size
            continue
        head = text.encode("utf-8")[: max(budget - used, 0)].decode("utf-8", errors="ignore")
        newline = head.rfind("\n")
        head = head[:newline] if newline > 0 else ""
        later = len(found_sections) - index - 1
        more = f" and {later} later file{'s' if later != 1 else ''}" if later else ""
        note = (
            f"[instructions truncated: project instructions are capped at {CAP_BYTES // 1024} KiB; "
            f"the rest of {label if len(label) <= 200 else '…' + label[-199:]}{more} was left out. "
            "Read them with read_file when they matter.]"
        )
        out.append((label, f"{head}\n\n{note}" if head.strip() else note))
        break
    return out
