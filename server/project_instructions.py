"""Where skills and custom commands live, and the fingerprint workspace trust keeps of a project's
(docs/extending.md).

A skill is a folder holding `SKILL.md`; a custom command is a Markdown file. Both are read from
the workspace (`.agents/skills/`, `.claude/skills/`, `.claude/commands/`, `.agents/commands/`) and
from the user's home (the same folders under `~`). A project's are instructions the repository
gives the agent, so they wait for workspace trust like `.shiro-neko/settings.json`'s held-back
keys: `project_settings.project_files` names each folder that has any, with the SHA-256 of the
files read from it, and a changed file is asked about again.

A shared leaf like project_settings.py (the terminal client's trust question imports it): the
standard library only. Parsing (YAML front matter) is agent/skills.py's, after trust.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["skill", "command"]

# (folder relative to the workspace or the home, what it holds), in the order a name is looked up.
SKILL_DIRS = (".agents/skills", ".claude/skills")
COMMAND_DIRS = (".claude/commands", ".agents/commands")
FOLDERS: tuple[tuple[str, Kind], ...] = (*((d, "skill") for d in SKILL_DIRS), *((d, "command") for d in COMMAND_DIRS))
SKILL_FILE = "SKILL.md"

MAX_PER_FOLDER = 100  # entries of one folder looked at; the rest are named as left out
MAX_FILE_BYTES = 256 * 1024  # one SKILL.md or command file; a bigger one is refused


@dataclass(frozen=True)
class Found:
    """One skill or command file, before it is read."""

    kind: Kind
    name: str  # the folder's name for a skill, the file's stem for a command
    path: Path  # SKILL.md or the command's .md file, as found (not resolved)
    folder: str  # FOLDERS' first element: where it was found


def listing(base: Path, problems: list[str] | None = None) -> list[Found]:
    """Every skill and command under `base` (a workspace root or the home), in FOLDERS order, then
    by name. Names that are not plain (hidden, a space or a slash) are skipped; past
    MAX_PER_FOLDER entries a folder's rest is named in `problems`."""
    out: list[Found] = []
    for folder, kind in FOLDERS:
        try:
            names = sorted(os.listdir(base / folder))
        except OSError:
            continue
        if len(names) > MAX_PER_FOLDER and problems is not None:
            problems.append(f"{base / folder}: {len(names)} entries, only the first {MAX_PER_FOLDER} are read")
        for entry in names[:MAX_PER_FOLDER]:
            if entry.startswith(".") or not entry.isprintable() or " " in entry:
                continue
            if kind == "skill":
                out.append(Found(kind, entry, base / folder / entry / SKILL_FILE, folder))
            elif entry.endswith(".md") and len(entry) > 3:
                out.append(Found(kind, entry[:-3], base / folder / entry, folder))
    return out


def read_file(path: Path, inside: Path | None) -> bytes:
    """A skill or command file's bytes. OSError (its text says why) for a file that is missing, a
    symbolic link leading out of `inside` (the workspace: a project cannot make the agent read
    `~/.ssh/id_rsa` as a skill), not a regular file (a FIFO would hang the reader) or over
    MAX_FILE_BYTES."""
    if inside is not None:
        try:
            resolved, root = path.resolve(strict=True), inside.resolve()
        except FileNotFoundError:
            raise
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop
            raise OSError(f"cannot be read ({exc})") from None
        if resolved != root and root not in resolved.parents:
            raise OSError("refused: a symbolic link out of the workspace")
        path = resolved
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError("refused: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise OSError(f"refused: over {MAX_FILE_BYTES // 1024} KiB")
        data = os.read(fd, MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise OSError(f"refused: over {MAX_FILE_BYTES // 1024} KiB")
        return data
    finally:
        os.close(fd)


def fingerprints(root: Path) -> list[tuple[str, str, list[str]]]:
    """For the trust record: per project folder that holds skills or commands, (the folder
    relative to the root, the SHA-256 of every file read from it, the names it would add, as the
    trust question shows them)."""
    import hashlib  # here: ~5 ms (OpenSSL) a folder without skills or commands never pays at start

    by_folder: dict[str, list[Found]] = {}
    for found in listing(root):
        by_folder.setdefault(found.folder, []).append(found)
    out: list[tuple[str, str, list[str]]] = []
    for folder, _ in FOLDERS:
        items = by_folder.get(folder)
        if not items:
            continue
        digest = hashlib.sha256()
        names: list[str] = []
        for found in items:
            try:
                content = hashlib.sha256(read_file(found.path, root)).hexdigest()
            except OSError as exc:
                if isinstance(exc, FileNotFoundError):
                    continue  # a folder under skills/ without SKILL.md is no skill
                content = f"unreadable: {exc}"
            digest.update(f"{found.path.relative_to(root)}\0{content}\n".encode())
            names.append(f"{'skill ' if found.kind == 'skill' else '/'}{found.name}")
        if names:
            out.append((folder, digest.hexdigest(), names))
    return out
