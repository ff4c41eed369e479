"""Permission rules (issue 39): `permissions: {allow, ask, deny}` in Claude Code's rule syntax.

A rule is `Tool` or `Tool(specifier)`: `Bash(npm test:*)` (a prefix of a command's words),
`Bash(npm test)` (exactly those words), `Edit(src/**)` / `Write(...)` / `Read(~/.ssh/**)`
(gitignore-style globs; `//abs`, `~/home`, anything else relative to the workspace root),
`WebFetch(domain:docs.python.org)` (that host and below it), `mcp__server__tool`, `mcp__server`.
Deny beats ask beats allow (docs/security.md "Permission rules").

A command is split into its simple commands by a real shell parser (bashlex), never a regex: a
compound command (`;`, `&&`, `||`, `|`, `$(…)`, backticks, subshells, functions) is allowed only
when every simple command in it is, and any one matching a deny rule denies the whole. A
redirection to a file, a variable assignment before a command, a function definition and a command
the parser cannot read match no allow rule, so they are asked about.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..config import PermissionSettings
from .tools.web_fetch import host_allowed

if TYPE_CHECKING:
    import pathspec

log = logging.getLogger(__name__)

Kind = Literal["deny", "ask", "allow"]

# Our tools under Claude Code's names. `Edit` covers every tool that changes a file (as in
# Claude Code), `Write` only write_file; `Read` every tool that reads files.
TOOL_NAMES: dict[str, tuple[str, ...]] = {
    "Bash": ("run_command",),
    "Edit": ("edit_file", "write_file", "apply_patch"),
    "Write": ("write_file",),
    "Read": ("read_file", "grep", "list_files"),
    "WebFetch": ("web_fetch",),
}
MAX_COMMAND_CHARS = 16_384  # longer commands are not parsed (and so are asked about)
MAX_SESSION_RULES = 200  # "Always allow" rules one session keeps; the oldest go first
_RULE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\((.*)\))?$", re.S)
# After the first word, a word that is a subcommand name rather than a path or a value.
_SUBCOMMAND = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
# A one-word prefix of these would allow any program: "Always allow" keeps their exact command.
_RUNS_ANYTHING = frozenset({
    "sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "deno", "bun", "perl", "ruby",
    "php", "env", "sudo", "doas", "xargs", "eval", "exec", "command", "builtin", "nohup", "time",
    "timeout", "nice", "watch", "ssh", "find", "awk", "sed", "git",
})
_QUIET_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


@dataclass(frozen=True)
class Rule:
    text: str
    tool: str  # Claude Code's name (`Bash`) or an MCP name (`mcp__server__tool`)
    spec: str | None


@dataclass(frozen=True)
class Decision:
    kind: Kind
    rule: str


@dataclass(frozen=True)
class _Part:
    """One simple command: its words, or None when no allow rule may cover it (and why)."""

    words: tuple[str, ...]
    allowable: bool


def parse_rule(text: str) -> Rule | None:
    """A rule string, or None when it is not in the rule syntax (ignored with a warning)."""
    m = _RULE.match(text.strip())
    if m is None:
        return None
    tool, spec = m.group(1), m.group(2)
    if spec is not None and not spec.strip():
        return None
    return Rule(text.strip(), tool, spec.strip() if spec is not None else None)


# -- commands ------------------------------------------------------------------------------


def _walk(node: Any, out: list[_Part]) -> None:
    kind = getattr(node, "kind", None)
    if kind == "command":
        words: list[str] = []
        allowable = True
        for part in node.parts:
            if part.kind == "word":
                words.append(part.word)
            elif part.kind == "assignment":
                allowable = False  # `LD_PRELOAD=x npm test` is not `npm test`
            elif part.kind == "redirect" and not _quiet_redirect(part):
                allowable = False  # `> ~/.bashrc` writes a file whatever the command is
            _walk(part, out)  # `$(…)` and backticks inside a word or a redirection
        out.append(_Part(tuple(words), allowable))
        return
    if kind == "function":
        out.append(_Part((), False))  # defining a command is not running an allowed one
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or ():
            _walk(child, out)
    for attr in ("command", "output"):
        child = getattr(node, attr, None)
        if child is not None and not isinstance(child, int):
            _walk(child, out)


def _quiet_redirect(node: Any) -> bool:
    """A redirection that writes no file: `2>&1`, `>/dev/null`, an input or a here-document."""
    if node.type in ("<", "<<", "<<-", "<<<", "<&"):
        return True
    output = node.output
    if isinstance(output, int):
        return True
    return node.type in (">&", ">", ">>", "&>") and getattr(output, "word", None) in _QUIET_TARGETS


@lru_cache(maxsize=512)
def simple_commands(command: str) -> tuple[_Part, ...] | None:
    """Every simple command of `command`, nested ones included, or None when it does not parse."""
    if len(command) > MAX_COMMAND_CHARS or not command.strip():
        return None
    import bashlex  # noqa: PLC0415 - ~150 ms (it builds its parser tables): at the first command, in a thread

    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex raises ParsingError and NotImplementedError (e.g. `case`) alike
        return None
    out: list[_Part] = []
    for tree in trees:
        _walk(tree, out)
    return tuple(out) if out else None


@lru_cache(maxsize=4096)
def _bash_pattern(spec: str | None) -> tuple[tuple[str, ...], bool] | None:
    """(words, is_prefix) of a Bash rule; () with is_prefix for `Bash`/`Bash(*)`; None: unusable.
    The rule's words are split as the shell splits a plain command (quotes removed), so they
    compare with the parsed command's words; a rule holding an operator simply never matches."""
    if spec is None or spec == "*":
        return (), True
    prefix = spec.endswith(":*") or spec.endswith(" *")
    try:
        words = tuple(shlex.split(spec[:-2] if prefix else spec))
    except ValueError:  # an unclosed quote
        return None
    return (words, prefix) if words else None


@dataclass(frozen=True)
class _BashIndex:
    """A list's Bash rules by their first word, so a check tries only the rules that can match."""

    any_rule: str | None  # the first `Bash` / `Bash(*)`
    by_first: dict[str, tuple[tuple[tuple[str, ...], bool, str], ...]]

    def match(self, part: _Part, spellings: bool = False) -> str | None:
        """The first rule matching `part`; with `spellings` (deny and ask rules) also the same
        program run by its path or through a wrapper (`/bin/rm`, `command rm`, `sudo rm`)."""
        if self.any_rule is not None:
            return self.any_rule
        for seen in (_spellings(part.words) if spellings else (part.words,)):
            if not seen:
                continue
            for words, prefix, text in self.by_first.get(seen[0], ()):
                if (seen[: len(words)] == words) if prefix else seen == words:
                    return text
        return None


# Programs that run the command that follows them (after their own options): a deny rule for
# `rm` is also a deny rule for `sudo rm`, `command rm`, `env X=1 rm`.
_WRAPPERS = frozenset({"command", "builtin", "exec", "nohup", "time", "sudo", "doas", "env", "nice", "xargs"})


def _spellings(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    out = [words]
    while words:
        first = words[0]
        base = first.rsplit("/", 1)[-1].lstrip("\\")
        if base != first:
            words = (base, *words[1:])
            out.append(words)
            continue
        if base not in _WRAPPERS:
            break
        rest = words[1:]
        while rest and (rest[0].startswith("-") or "=" in rest[0]):
            rest = rest[1:]  # the wrapper's options and env's assignments
        words = rest
        out.append(words)
    return out


@lru_cache(maxsize=64)
def _bash_index(texts: tuple[str, ...]) -> _BashIndex:
    any_rule: str | None = None
    by_first: dict[str, list[tuple[tuple[str, ...], bool, str]]] = {}
    for rule in _compiled(texts):
        if rule.tool != "Bash":
            continue
        pattern = _bash_pattern(rule.spec)
        if pattern is None:
            log.warning("ignoring permission rule %r: its command does not parse", rule.text)
            continue
        words, prefix = pattern
        if not words:
            any_rule = any_rule or rule.text
        else:
            by_first.setdefault(words[0], []).append((words, prefix, rule.text))
    return _BashIndex(any_rule, {k: tuple(v) for k, v in by_first.items()})


# -- paths, hosts, MCP --------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _path_pattern(spec: str, root: str, home: str) -> "tuple[str, pathspec.PathSpec]":
    """(base directory, gitignore-style pattern relative to it) of an Edit/Write/Read rule."""
    if spec.startswith("//"):
        base, pattern = "/", spec[2:]
    elif spec == "~" or spec.startswith("~/"):
        base, pattern = home, spec[2:] or "**"
    else:
        base, pattern = root, spec.removeprefix("./")
    import pathspec  # noqa: PLC0415 - ~20 ms, paid only when a path rule is tried

    return base, pathspec.PathSpec.from_lines("gitignore", [pattern])


def _path_matches(spec: str | None, path: Path, root: Path) -> bool:
    if spec is None:
        return True
    base, pattern = _path_pattern(spec, str(root), str(Path.home()))
    try:
        rel = path.relative_to(base)
    except ValueError:
        return False
    text = rel.as_posix()
    # The base itself (`grep` with no path searches the whole workspace) is under `**` only.
    return pattern.match_file(text) if text != "." else spec.endswith("**")


def _call_paths(tool: str, args: dict[str, Any], root: Path) -> list[Path]:
    """The call's path as written (made absolute, `..` folded) and as it resolves: a rule that
    matches either matches (a symlink is judged by its name and by where it leads)."""
    raw = args.get("path")
    if raw is None and tool in ("grep", "list_files"):
        raw = "."
    if not isinstance(raw, str):
        return []
    p = Path(raw).expanduser()
    full = p if p.is_absolute() else root / p
    paths = [Path(os.path.normpath(full))]
    try:
        paths.append(full.resolve())
    except (OSError, RuntimeError):
        pass
    return paths


def _mcp_matches(rule: Rule, tool: str) -> bool:
    if rule.spec is not None:
        return rule.spec == "*" and (tool == rule.tool or tool.startswith(rule.tool + "__"))
    return tool == rule.tool or tool.startswith(rule.tool + "__")


# -- the decision -------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _compiled(texts: tuple[str, ...]) -> tuple[Rule, ...]:
    """The rules of a list, parsed once per list (cached); what is not a rule is named once, skipped."""
    rules = []
    for text in texts:
        rule = parse_rule(text)
        if rule is None:
            log.warning("ignoring permission rule %r: not Tool or Tool(specifier), e.g. Bash(npm test:*)", text)
        else:
            rules.append(rule)
    return tuple(rules)


def _matches(rule: Rule, tool: str, args: dict[str, Any], root: Path, every: bool = False) -> bool:
    """`every`: a call that names several files (apply_patch) matches only when the rule covers all
    of them (an allow rule); else when it covers any (deny, ask)."""
    if rule.tool.startswith("mcp__"):
        return _mcp_matches(rule, tool)
    if tool not in TOOL_NAMES.get(rule.tool, ()):
        return False
    if rule.tool == "Bash":
        return False  # run_command is decided above, by the parts of its command
    if rule.tool == "WebFetch":
        if rule.spec is None:
            return True
        url = args.get("url")
        if not rule.spec.startswith("domain:") or not isinstance(url, str):
            return False
        from .tools.web_fetch import parse_url  # noqa: PLC0415 - the web_fetch module is loaded already

        try:
            return host_allowed(parse_url(url).host, (rule.spec[len("domain:"):],))
        except Exception:
            return False
    if rule.spec is None:
        return True
    if tool == "apply_patch":
        # Its files are in the patch text (tools/apply_patch.py): `Edit(secrets/**)` denies a patch
        # that touches any file there, `Edit(src/**)` allows only a patch of files all under src.
        from .tools.apply_patch import patch_paths  # noqa: PLC0415 - loaded with the tools already

        hits = [any(_path_matches(rule.spec, p, root) for p in _call_paths(tool, {"path": f}, root))
                for f in patch_paths(args.get("input"))]
        return bool(hits) and (all(hits) if every else any(hits))
    return any(_path_matches(rule.spec, p, root) for p in _call_paths(tool, args, root))


def decide(
    settings: PermissionSettings, session_allow: list[str], tool: str, args: Any, root: Path
) -> Decision | None:
    """What the rules say about one call: deny, ask, allow, or None (no rule speaks to it)."""
    if not isinstance(args, dict):
        args = {}
    if tool == "run_command":
        command = args.get("command")
        parts = simple_commands(command) if isinstance(command, str) else None
        for kind, texts in (("deny", tuple(settings.deny)), ("ask", tuple(settings.ask))):
            index = _bash_index(texts)
            if index.any_rule is not None:  # even a command that does not parse
                return Decision(kind, index.any_rule)  # type: ignore[arg-type]
            for part in parts or ():
                hit = index.match(part, spellings=True)
                if hit is not None:
                    return Decision(kind, hit)  # type: ignore[arg-type]
        if parts is None or not all(p.allowable for p in parts):
            return None  # unreadable, or a part no rule may allow: asked as before
        allowing = _bash_index((*settings.allow, *session_allow))
        chosen: list[str] = []
        for part in parts:
            hit = allowing.match(part)
            if hit is None:
                return None
            chosen.append(hit)
        return Decision("allow", ", ".join(dict.fromkeys(chosen)))
    deny, ask = _compiled(tuple(settings.deny)), _compiled(tuple(settings.ask))
    allow = _compiled((*settings.allow, *session_allow))
    for kind, rules in (("deny", deny), ("ask", ask), ("allow", allow)):
        for rule in rules:
            if _matches(rule, tool, args, root, every=kind == "allow"):
                return Decision(kind, rule.text)  # type: ignore[arg-type]
    return None


# -- "Always allow" -----------------------------------------------------------------------


def narrowest_rules(tool: str, args: Any) -> list[str]:
    """The rules an "Always allow" of this call adds: for run_command its prefix (the command and
    its subcommand words, up to the first argument that looks like a path or a value: `npm test
    -- -k x` -> `Bash(npm test:*)`), the exact command when that prefix would allow any program
    (`python x.py`), one exact rule per part of a compound command, and none when a part cannot
    be allowed at all (a redirection to a file) or the command does not parse."""
    if tool != "run_command" or not isinstance(args, dict) or not isinstance(args.get("command"), str):
        return []
    parts = simple_commands(args["command"])
    if parts is None or not all(p.allowable and p.words for p in parts):
        return []
    if len(parts) > 1:
        return list(dict.fromkeys(f"Bash({shlex.join(p.words)})" for p in parts))
    words = parts[0].words
    prefix = [words[0]]
    for word in words[1:3]:
        if not _SUBCOMMAND.match(word):
            break
        prefix.append(word)
    first = words[0]
    if "/" in first or "=" in first or (len(prefix) == 1 and len(words) > 1 and first in _RUNS_ANYTHING):
        return [f"Bash({shlex.join(words)})"]
    return [f"Bash({shlex.join(prefix)}:*)"]


def remember_for_session(rules: list[str], new: list[str]) -> None:
    """Add `new` to a session's rule list, keeping at most MAX_SESSION_RULES (the oldest go)."""
    for rule in new:
        if rule not in rules:
            rules.append(rule)
    del rules[: max(0, len(rules) - MAX_SESSION_RULES)]
