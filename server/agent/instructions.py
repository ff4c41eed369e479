"""Project instruction files (AGENTS.md, else CLAUDE.md) for the system prompt.

Read from the workspace root and from every directory between the root and each file the agent
works on, root first and the nearest directory last, so the most specific instructions come last
and read as overriding the general ones. Per directory, `AGENTS.md` wins and `CLAUDE.md` is the
fallback for projects that only have that one.

The total is capped at 32 KiB (UTF-8 bytes, the note included) because it is resent on every
step. When the cap is hit, the end is cut (the nearest, most specific files go first: the root's
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
HEADING = "Project instructions (from the files below; later, nearer ones take precedence):"
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


def collect_instructions(root: Path, touched: Iterable[Path] = ()) -> str:
    """The instruction block for the system prompt, or "" when no directory has a file."""
    root = Path(os.path.abspath(root))
    sections: list[tuple[str, str]] = []
    for directory in _dirs(root, touched):
        found = _instruction_file(root, directory)
        if found is None:
            continue
        text = found[1].decode("utf-8", errors="replace").strip()
        if text:
            sections.append((found[0], text))
    if not sections:
        return ""
    parts = [HEADING]
    for label, text in sections:
        parts.append(f"--- {label} ---\n{text}")
    full = "\n\n".join(parts)
    if len(full.encode("utf-8")) <= CAP_BYTES:
        return full
    return _truncate(parts, sections)


def _truncate(parts: list[str], sections: list[tuple[str, str]]) -> str:
    budget = CAP_BYTES - _NOTE_ROOM
    kept: list[str] = []
    used = 0
    cut_label = ""
    omitted_after = 0
    for index, part in enumerate(parts):
        size = len(part.encode("utf-8")) + (2 if kept else 0)
        if used + size <= budget:
            kept.append(part)
            used += size
            continue
        room = budget - used - (2 if kept else 0)
        head = part.encode("utf-8")[: max(room, 0)].decode("utf-8", errors="ignore")
        newline = head.rfind("\n")
        if newline > 0:
            head = head[:newline]  # end on a whole line so no instruction is cut mid-sentence
        if head.strip():
            kept.append(head)
        section_index = index - 1  # parts[0] is the heading
        cut_label = sections[section_index][0]
        omitted_after = len(sections) - section_index - 1
        break
    later = f" and {omitted_after} later file{'s' if omitted_after != 1 else ''}" if omitted_after else ""
    label = cut_label if len(cut_label) <= 200 else "…" + cut_label[-199:]
    note = (
        f"[instructions truncated: project instructions are capped at {CAP_BYTES // 1024} KiB; "
        f"the rest of {label}{later} was left out. Read them with read_file when they matter.]"
    )
    return "\n\n".join(kept + [note])
