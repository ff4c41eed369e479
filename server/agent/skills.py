"""Skills and custom commands (docs/extending.md): SKILL.md folders and Markdown command files,
their YAML front matter, the catalog of one workspace, `/name args` expanded for the model, the
list the model is offered and the `skill` tool that loads one in full.

Where they live and the trust fingerprint: project_instructions.py. A project's are read only
once the folder is trusted (`Catalog.entries(project=...)`, decided in features/skills.py).
Progressive disclosure, as the format intends: the model is told each skill's name and
description (a context section, appended when the list changes, so the instructions stay the
same bytes: agent/context_messages.py), and reads a skill's body with the `skill` tool.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from ..project_instructions import Found, listing, read_file
from .tools.base import Tool, ToolError, ToolHost, ToolResult

log = logging.getLogger(__name__)

Scope = Literal["project", "user"]

MAX_ENTRIES = 200  # skills and commands of one catalog, project and user together
MAX_DESCRIPTION = 300  # characters of a description shown in menus and to the model
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
PLAIN_KEY = re.compile(r"^([A-Za-z][\w-]*):(.*)$")
SKILLS_SECTION = "available_skills"  # the context section that lists them (agent/context_messages.py)


@dataclass(frozen=True)
class Entry:
    kind: Literal["skill", "command"]
    name: str
    description: str
    path: Path
    scope: Scope
    body: str  # the Markdown after the front matter
    argument_hint: str | None = None


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(the YAML front matter as a mapping, the body). No front matter: ({}, text). Front matter
    that is not valid YAML, or not a mapping, raises ValueError naming the problem."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        raise ValueError("the front matter has no closing '---' line")
    import yaml  # noqa: PLC0415 - ~10 ms, paid only by a workspace with skills or commands

    header = lines[1:end]
    try:
        # safe_load: plain data only; a tag that would build an object is an error, never run.
        meta = yaml.safe_load("\n".join(header)) or {}
    except yaml.YAMLError as exc:
        # Claude Code's own examples write `argument-hint: [pr-number] [priority]`, which YAML
        # refuses; it reads such lines as plain text, and so do we, so those files work as they are.
        meta = {m.group(1): m.group(2).strip() for line in header if (m := PLAIN_KEY.match(line))}
        if not meta:
            raise ValueError(f"its front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(meta, dict):
        raise ValueError("its front matter is not a mapping of keys to values")
    return meta, "\n".join(lines[end + 1:]).lstrip("\n")


def _text(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, list):  # argument-hint: [file] [mode] is a YAML list in Claude Code's docs
        value = " ".join(f"[{v}]" for v in value)
    return " ".join(str(value).split()) or None


def _short(text: str) -> str:
    # Shown in menus and to the model: one line, control characters out, bounded.
    clean = "".join(c if c.isprintable() else " " for c in text).strip()
    return clean if len(clean) <= MAX_DESCRIPTION else clean[: MAX_DESCRIPTION - 1] + "…"


def parse(found: Found, data: bytes, scope: Scope) -> Entry:
    """One skill or command file's entry; ValueError says what is wrong with it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    meta, body = front_matter(text.replace("\r\n", "\n"))
    name = found.name
    if found.kind == "skill":
        declared = _text(meta, "name")
        if declared is not None and declared != name:
            # The folder names it in the menu; the SKILL.md name is the model's. Claude Code and
            # the Agent Skills format want them equal: one name, whichever the user typed.
            log.info("skill %s: front matter name %r differs from its folder; the folder's is used", found.path, declared)
        description = _text(meta, "description")
        if not description:
            raise ValueError("SKILL.md has no `description` in its front matter (the model picks a skill by it)")
    else:
        description = _text(meta, "description") or next((line.strip("# ").strip() for line in body.splitlines() if line.strip()), "")
    if not NAME.match(name):
        raise ValueError(f"{name!r} is not a usable command name (letters, digits, - _ . :, at most 64)")
    return Entry(found.kind, name, _short(description or name), found.path, scope, body,
                 _text(meta, "argument-hint") if found.kind == "command" else None)


class Catalog:
    """The skills and commands of one workspace and of the user's home, re-read when a file
    changes (a stat per file per look; parsed files are cached by mtime and size)."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.home = home
        self._parsed: dict[Path, tuple[tuple[int, int], Entry | str]] = {}

    def _entry(self, found: Found, scope: Scope, problems: list[str]) -> Entry | None:
        inside = self.root if scope == "project" else None
        try:
            info = found.path.stat()
        except OSError:
            if found.path.is_symlink():
                problems.append(f"{found.path}: refused: a symbolic link to nothing")
            return None  # a folder under skills/ without SKILL.md is no skill
        stamp = (info.st_mtime_ns, info.st_size)
        cached = self._parsed.get(found.path)
        if cached is None or cached[0] != stamp:
            try:
                result: Entry | str = parse(found, read_file(found.path, inside), scope)
            except (OSError, ValueError) as exc:
                result = f"{found.path}: {exc}; left out"
            cached = self._parsed[found.path] = (stamp, result)
        if isinstance(cached[1], str):
            problems.append(cached[1])
            return None
        return cached[1]

    def entries(self, project: frozenset[str], problems: list[str] | None = None) -> list[Entry]:
        """User skills and commands, and the project's from the folders in `project` (those the
        user trusts, as project_instructions.FOLDERS names them). One name, one
        entry: a user's wins over a project's (a repository cannot shadow your own command), a
        skill over a command (as in Claude Code), the first folder of FOLDERS over the next."""
        out: dict[str, Entry] = {}
        seen: list[str] = problems if problems is not None else []
        bases: list[tuple[Path, Scope]] = [(self.home, "user")]
        if project and self.root != self.home:
            bases.append((self.root, "project"))
        listed = [(found, scope) for base, scope in bases for found in listing(base, seen)
                  if scope == "user" or found.folder in project]
        # The cache holds only what is listed now: a removed or renamed file's entry goes.
        paths = {found.path for found, _ in listed}
        self._parsed = {path: kept for path, kept in self._parsed.items() if path in paths}
        for found, scope in listed:
            entry = self._entry(found, scope, seen)
            if entry is None:
                continue
            kept = out.get(entry.name)
            if kept is None or (kept.kind == "command" and entry.kind == "skill" and kept.scope == entry.scope):
                out[entry.name] = entry
            if len(out) >= MAX_ENTRIES:
                seen.append(f"more than {MAX_ENTRIES} skills and commands: the rest are left out")
                return list(out.values())
        return list(out.values())


# -- what the model sees -------------------------------------------------------------------------


def skills_section(entries: list[Entry]) -> str:
    """The context section that offers the skills: names and descriptions only."""
    skills = [e for e in entries if e.kind == "skill"]
    if not skills:
        return ""
    lines = [f"- {e.name}: {e.description}" for e in skills]
    return ("Skills you can load with the `skill` tool when a task matches one (read it before you "
            "start that task; the user may also load one by typing /name):\n" + "\n".join(lines))


def skill_block(entry: Entry) -> str:
    """A skill's whole body as the model reads it, with the folder its relative paths start from."""
    return (f'<skill name="{entry.name}" folder="{entry.path.parent}">\n{entry.body.rstrip()}\n</skill>')


POSITIONAL = re.compile(r"\$([1-9])")
SLASH = re.compile(r"/(\S+)(.*)", re.S)


def expand(entry: Entry, arguments: str) -> str:
    """A custom command's text for the model: `$ARGUMENTS` is everything after the name, `$1`..`$9`
    its words. Arguments given to a command that names none are added after it (as Claude Code
    does), so they are never lost."""
    body = entry.body
    words = arguments.split()
    used = "$ARGUMENTS" in body or bool(POSITIONAL.search(body))
    body = body.replace("$ARGUMENTS", arguments)
    body = POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", body)
    if arguments and not used:
        body = f"{body.rstrip()}\n\nARGUMENTS: {arguments}"
    return body.strip()


def command_block(entry: Entry, arguments: str) -> str:
    return f'<command name="/{entry.name}">\n{expand(entry, arguments)}\n</command>'


def split_slash(prompt: str) -> tuple[str, str] | None:
    """(name, arguments) of a prompt `/name args`; None for anything else (`/usr/bin/env` is a
    path: names hold no slash)."""
    match = SLASH.match(prompt)
    if match is None or not NAME.match(match.group(1)):
        return None
    return match.group(1), match.group(2).strip()


class SkillArgs(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(description="The skill's name, as listed in available_skills.")]


def skill_tool(entries: list[Entry]) -> Tool[SkillArgs]:
    """`skill`: loads one of the listed skills in full (progressive disclosure)."""
    skills = {e.name: e for e in entries if e.kind == "skill"}

    async def run(_host: ToolHost, args: SkillArgs) -> ToolResult:
        entry = skills.get(args.name)
        if entry is None:
            known = ", ".join(sorted(skills)) or "none"
            raise ToolError(f"no skill {args.name!r}; available: {known}")
        return ToolResult(skill_block(entry))

    return Tool(
        name="skill",
        description=("Load a skill's full instructions by name (the skills are listed in "
                     "available_skills with what each is for). Files the skill mentions are relative "
                     "to its folder."),
        arguments=SkillArgs,
        run=run,
        summary=lambda args: f"load skill {args.get('name', '')}",
        read_only=True,
    )
