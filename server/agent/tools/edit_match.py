"""Where edit_file's old text is in a file, forgiving the model's usual slips but never guessing.

The stages, in order (issue 37); each must find exactly one place, and a stage that finds several
refuses at once instead of trying a looser one:

1. the text as sent (a CRLF file matched with the model's bare \\n, as read_file shows it);
2. the same with the line-number prefixes read_file prints taken off, only when every line of
   old_text carries one and the numbers are consecutive;
3. whole lines compared without trailing whitespace;
4. whole lines compared without their indentation, the old text's indentation consistent with
   the file's; new_text is then re-indented the way the file indents (tabs included);
5. stages 3 and 4 again with typographic quotes, dashes and ellipses read as their ASCII forms.

A failure says where: the line numbers of every occurrence when ambiguous, the closest lines of
the file when nothing matched. bench/edit_replay.py replays real hunks through this to check that
no stage ever makes a wrong edit silently.

apply_patch's `@@ <line>` anchor narrows every stage to the places that start in the anchor's
scope (`starts`): exactly one of them must match there, whatever the rest of the file holds.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from .base import ToolError

# read_file's prefix: the number right-aligned, then a TAB (tools/files.py `_number`).
_PREFIX = re.compile(r"^ *(\d+)\t")
_TYPOGRAPHIC = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u00a0": " ", "\u2026": "...",
})
# Ambiguity and miss messages stay short: the model needs where, not everything.
_MAX_PLACES = 20
_CLOSEST_LINES = 12
# A miss on a huge file does not scan it all for the closest lines.
_MAX_SCAN_LINES = 50_000


@dataclass
class Planned:
    """One edit located: the file's new text and what the model is told about it."""

    text: str
    first_line: int  # 1-based, of the first replacement
    old_lines: int
    new_lines: int
    count: int  # places replaced
    how: str  # "" for an exact match, else which fallback matched


def _lines(text: str) -> list[str]:
    out = text.split("\n")
    if text.endswith("\n"):
        out.pop()
    return [line[:-1] if line.endswith("\r") else line for line in out]


def strip_line_numbers(text: str) -> str | None:
    """`text` without read_file's prefixes when every line has one, numbered consecutively."""
    lines = _lines(text)
    if not lines:
        return None
    numbers = []
    for line in lines:
        found = _PREFIX.match(line)
        if found is None:
            return None
        numbers.append(int(found.group(1)))
    if any(b != a + 1 for a, b in zip(numbers, numbers[1:])):
        return None
    tail = "\n" if text.endswith("\n") else ""
    return "\n".join(_PREFIX.sub("", line, count=1) for line in lines) + tail


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _width(indent: str) -> int:
    return sum(4 if c == "\t" else 1 for c in indent)


def width(line: str) -> int:
    """How deep a line is indented (a TAB counts 4)."""
    return _width(_indent(line))


def anchor_key(line: str) -> str:
    """A line as apply_patch compares an '@@' anchor with it: without the spaces around it,
    typographic quotes and dashes read as ASCII."""
    return line.strip().translate(_TYPOGRAPHIC)


def _file_unit(lines: list[str]) -> str:
    """How the file indents one level: a TAB, or the commonest step of spaces."""
    tabs = spaces = 0
    steps: dict[int, int] = {}
    previous = 0
    for line in lines:
        if not line.strip():
            continue
        ind = _indent(line)
        if ind.startswith("\t"):
            tabs += 1
        elif ind:
            spaces += 1
        width = len(ind) if "\t" not in ind else previous
        if width != previous:
            step = abs(width - previous)
            steps[step] = steps.get(step, 0) + 1
        previous = width
    if tabs > spaces:
        return "\t"
    good = [s for s in steps if s in (2, 3, 4, 8)]
    return " " * (max(good, key=lambda s: steps[s]) if good else 4)


class _Reindent:
    """new_text's indentation translated into the file's, from the matched pairs of lines."""

    def __init__(self, old: list[str], found: list[str], file_lines: list[str]) -> None:
        self.pairs: dict[str, str] = {}
        for o, f in zip(old, found):
            if o.strip():
                self.pairs.setdefault(_indent(o), _indent(f))
        firsts = [(o, f) for o, f in zip(old, found) if o.strip()]
        self.base_old, self.base_file = (_indent(firsts[0][0]), _indent(firsts[0][1])) if firsts else ("", "")
        self.unit = _file_unit(file_lines)
        widths = sorted({_width(k) for k in self.pairs})
        steps = [b - a for a, b in zip(widths, widths[1:]) if b > a]
        self.old_unit = min(steps) if steps else _width(self.unit)
        # Levels translate an unseen indentation only where they reproduce every seen pair: a file
        # that mixes tabs and spaces (or a one-space step) has no level to count in.
        self.levels_hold = all(self._by_levels(o) == f for o, f in self.pairs.items())
        # Indentation lost as a whole (the model dropped the snippet's common indentation): every
        # seen pair is the file's lines = one prefix + the sent ones. Then an unseen indentation
        # off the levels (a docstring line of 7 spaces, arguments aligned to a parenthesis) takes
        # the same prefix, when both are of the one character (never tabs added to spaces).
        shifts = {f[: len(f) - len(o)] for o, f in self.pairs.items() if f.endswith(o)}
        whole = len(shifts) == 1 and all(f.endswith(o) for o, f in self.pairs.items())
        self.shift = shifts.pop() if whole else None

    def _by_levels(self, ind: str) -> str | None:
        levels, rest = divmod(_width(ind) - _width(self.base_old), self.old_unit)
        if rest:
            return None
        if levels >= 0:
            return self.base_file + self.unit * levels
        base = self.base_file
        for _ in range(-levels):
            if not base.endswith(self.unit):
                return None
            base = base[: -len(self.unit)]
        return base

    def __call__(self, line: str) -> str:
        if not line.strip():
            return ""
        ind, body = _indent(line), line.lstrip(" \t")
        if ind in self.pairs:
            return self.pairs[ind] + body
        translated = self._by_levels(ind) if self.levels_hold else None
        if translated is not None:
            return translated + body
        if self.shift is not None and len(set(self.shift + ind)) == 1:
            return self.shift + ind + body
        raise ToolError(
            "the text matched ignoring indentation, but new_text's indentation cannot be "
            "translated into the file's; read the lines again and copy their indentation exactly"
        )


def _consistent(old: list[str], found: list[str]) -> bool:
    """The old text's indentation maps onto the file's one to one, keeping its order."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for o, f in zip(old, found):
        if not o.strip():
            continue
        oi, fi = _indent(o), _indent(f)
        if forward.setdefault(oi, fi) != fi or backward.setdefault(fi, oi) != oi:
            return False
    ordered = sorted(forward.items(), key=lambda kv: _width(kv[0]))
    return all(_width(a[1]) < _width(b[1]) for a, b in zip(ordered, ordered[1:]))


class NotFound(ToolError):
    """No stage found the old text at all (as opposed to finding it several times)."""


class Ambiguous(ToolError):
    """A stage found the old text at several places (`where`: which), with edit_file's advice."""

    def __init__(self, where: str) -> None:
        super().__init__(f"{where}; include more surrounding lines to make it unique, "
                         "or pass replace_all: true to change every one")
        self.where = where


def _line_places(file_lines: list[str], old: list[str], key: "_Key", indent_free: bool,
                 starts: frozenset[int] | None = None) -> list[int]:
    if not old:
        return []
    wanted = [key(line) for line in old]
    keys = [key(line) for line in file_lines]
    first = wanted[0]
    places = []
    for i in range(len(keys) - len(old) + 1):
        if starts is not None and i not in starts:
            continue
        if keys[i] == first and keys[i : i + len(old)] == wanted:
            if indent_free and not _consistent(old, file_lines[i : i + len(old)]):
                continue
            places.append(i)
    return places


class _Key:
    def __init__(self, strip_indent: bool, typographic: bool) -> None:
        self.strip_indent, self.typographic = strip_indent, typographic

    def __call__(self, line: str) -> str:
        line = line.rstrip()
        if self.strip_indent:
            line = line.lstrip()
        return line.translate(_TYPOGRAPHIC) if self.typographic else line


def _exact_places(text: str, needle: str, starts: frozenset[int] | None = None) -> list[int]:
    # Overlapping matches count too: replacing "aa" in "aaa" is ambiguous even though str.count says 1.
    found, at = [], text.find(needle)
    while at >= 0:
        # Within an anchor's scope the text is whole lines that start on one of the allowed lines.
        if starts is None or ((at == 0 or text[at - 1] == "\n") and text.count("\n", 0, at) in starts):
            found.append(at)
        at = text.find(needle, at + 1)
    return found


def _ambiguous(shown: str, numbers: list[int], how: str) -> Ambiguous:
    lines = list(dict.fromkeys(numbers))  # two occurrences on one line name it once
    listed = ", ".join(str(n) for n in lines[:_MAX_PLACES]) + (" …" if len(lines) > _MAX_PLACES else "")
    matched = f" ({how})" if how else ""
    return Ambiguous(
        f"old_text found {len(numbers)} times in '{shown}'{matched}, starting at line"
        f"{'s' if len(lines) > 1 else ''} {listed}"
    )


def closest_lines(file_lines: list[str], old: list[str]) -> str:
    """The file's lines most like `old`, numbered as read_file prints them (for a miss)."""
    wanted = [line.strip() for line in old if line.strip()]
    if not wanted or not file_lines:
        return ""
    scan = file_lines[:_MAX_SCAN_LINES]
    anchor = wanted[0]
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)
    best, best_at = 0.0, -1
    for i, line in enumerate(scan):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
            continue
        ratio = matcher.ratio()
        if ratio > best:
            best, best_at = ratio, i
    if best_at < 0 or best < 0.5:
        return ""
    start = max(best_at - 2, 0)
    end = min(best_at + max(len(old), 1) + 2, len(scan), start + _CLOSEST_LINES)
    return "\n".join(f"{n + 1:>5}\t{scan[n]}" for n in range(start, end))


def _missed(shown: str, file_lines: list[str], old: list[str]) -> ToolError:
    near = closest_lines(file_lines, old)
    hint = f"\nThe closest lines in the file are:\n{near}" if near else ""
    return NotFound(
        f"old_text not found in '{shown}' (also not when ignoring line numbers, trailing whitespace, "
        "indentation or typographic quotes); read the file again and copy the text exactly" + hint
    )


def _eol(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _chunks(text: str) -> list[str]:
    """The file's lines with their line breaks kept (only \n ends a line, as in `_lines`)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _splice_lines(text: str, places: list[int], length: int, replacements: list[list[str]]) -> str:
    """`text` with `length` lines at each place (0-based, ascending) replaced by whole lines."""
    chunks = _chunks(text)
    eol = _eol(text)
    out: list[str] = []
    cursor = 0
    for place, new_lines in zip(places, replacements):
        out += chunks[cursor:place]
        replaced = chunks[place : place + length]
        ends = replaced[-1].endswith("\n")
        if new_lines:
            out.append(eol.join(new_lines) + (eol if ends else ""))
        elif not ends and out:
            # The file's last lines deleted: the line before them now ends the file.
            out[-1] = out[-1].rstrip("\n").removesuffix("\r")
        cursor = place + length
    out += chunks[cursor:]
    return "".join(out)


def plan_edit(text: str, old: str, new: str, *, shown: str, replace_all: bool = False,
              starts: frozenset[int] | None = None) -> Planned:
    """The file's text after replacing `old` with `new`; a ToolError that says where when refused
    (NotFound when nothing matched). `starts`: the 0-based lines a place may start on (all if None)."""
    if not old:
        raise ToolError("old_text is empty; to write a whole file use write_file")
    if old == new:
        raise ToolError("old_text and new_text are the same; there is nothing to change")
    crlf = "\r\n" in text
    attempts: list[tuple[str, str, str]] = [(old, new, "")]
    stripped = strip_line_numbers(old)
    if stripped is not None:
        # new_text loses its prefixes only when it carries them the same way.
        new_stripped = strip_line_numbers(new) if new else new
        attempts.append((stripped, new if new_stripped is None else new_stripped, "without the line-number prefixes"))
    for candidate_old, candidate_new, how in attempts:
        for o, n in ((candidate_old, candidate_new),) + (
            ((candidate_old.replace("\n", "\r\n"), candidate_new.replace("\n", "\r\n")),)
            if crlf and "\r\n" not in candidate_old else ()
        ):
            found = _exact_places(text, o, starts)
            if len(found) == 1 or (found and replace_all):
                return _splice_exact(text, found, o, n, how, replace_all)
            if found:
                raise _ambiguous(shown, [text.count("\n", 0, at) + 1 for at in found], how)
    file_lines = _lines(text)
    base_old, base_new, base_how = attempts[-1]
    old_lines, new_lines = _lines(base_old), _lines(base_new)
    stages = (
        (_Key(False, False), False, "ignoring trailing whitespace"),
        (_Key(True, False), True, "ignoring indentation"),
        (_Key(False, True), False, "reading typographic quotes and dashes as ASCII"),
        (_Key(True, True), True, "ignoring indentation and typographic quotes"),
    )
    for key, indent_free, stage in stages:
        places = _line_places(file_lines, old_lines, key, indent_free, starts)
        if not places:
            continue
        how = ", ".join(h for h in (base_how, stage) if h)
        if len(places) > 1 and not replace_all:
            raise _ambiguous(shown, [p + 1 for p in places], how)
        if _overlap(places, len(old_lines)):
            raise _ambiguous(shown, [p + 1 for p in places], how + "; the places overlap")
        replacements = []
        for place in places:
            matched = file_lines[place : place + len(old_lines)]
            if indent_free:
                reindent = _Reindent(old_lines, matched, file_lines)
                replacements.append([reindent(line) for line in new_lines])
            else:
                replacements.append(list(new_lines))
        updated = _splice_lines(text, places, len(old_lines), replacements)
        return Planned(updated, places[0] + 1, len(old_lines), len(new_lines), len(places), how)
    raise _missed(shown, file_lines, old_lines)


def _overlap(places: list[int], length: int) -> bool:
    return any(b < a + length for a, b in zip(places, places[1:]))


def _whole_lines(text: str, at: int, old: str) -> bool:
    """`old` at `at` covers whole lines: starts a line and ends where a line break follows."""
    end = at + len(old)
    return (at == 0 or text[at - 1] == "\n") and not old.endswith("\n") and text[end : end + 1] in ("\n", "\r")


def _splice_exact(text: str, found: list[int], old: str, new: str, how: str, replace_all: bool) -> Planned:
    if not new and all(_whole_lines(text, at, old) for at in found):
        # Deleting whole lines without their last line break would leave an empty line behind:
        # the model copied the lines as read_file shows them, and means them gone.
        old += "\r\n" if text.startswith("\r\n", found[0] + len(old)) else "\n"
    if replace_all and len(found) > 1:
        # Overlapping occurrences cannot all be replaced: replace_all asks for distinct places.
        if any(b < a + len(old) for a, b in zip(found, found[1:])):
            raise ToolError("old_text's occurrences overlap; replace_all needs separate occurrences")
    parts, cursor = [], 0
    for at in found:
        parts += [text[cursor:at], new]
        cursor = at + len(old)
    parts.append(text[cursor:])
    return Planned(
        "".join(parts), text.count("\n", 0, found[0]) + 1, max(len(_lines(old)), 1), len(_lines(new)),
        len(found), how,
    )
