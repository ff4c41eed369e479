"""Unified diffs on the wire: an edit's approval (`ApproveParams.diff`) and a turn's changes
(`shiro.turnDiff`), docs/protocol.md "Diffs".

difflib writes them (`--- a/path`, `+++ b/path`, `@@` hunks, 3 lines of context); an added file's
old side and a deleted file's new side are `/dev/null`, as git shows them. Every line goes through
visible_text.py's `visible`: the diff holds the file's text, and a file is untrusted (an escape in
it must not act on the terminal or Emacs buffer that shows the approval). Capped at `cap` lines
plus a last line that says how many more, so a rewrite of a large file cannot flood a client.
"""

from __future__ import annotations

import difflib

from .visible_text import visible

CONTEXT = 3


def diff_lines(path: str, old: str | None, new: str | None) -> list[str]:
    """The unified diff of `path` from `old` to `new` (None: the file is absent), one entry a line;
    [] when nothing changed."""
    before = "" if old is None else old
    after = "" if new is None else new
    if before == after and (old is None) == (new is None):
        return []
    lines = list(difflib.unified_diff(
        before.splitlines(), after.splitlines(),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
        n=CONTEXT, lineterm="",
    ))
    if not lines:  # only the line endings or the last newline differ: say so rather than show nothing
        lines = [f"--- a/{path}", f"+++ b/{path}", "@@ line endings or the final newline changed @@"]
    return [visible(line) for line in lines]


def binary_lines(path: str) -> list[str]:
    return [f"Binary file {visible(path)} changed"]


def capped(lines: list[str], cap: int) -> tuple[str, bool]:
    """The first `cap` lines and, past the cap, `… N more lines (see the whole diff)`."""
    if len(lines) <= cap:
        return "\n".join(lines), False
    more = len(lines) - cap
    return "\n".join(lines[:cap] + [f"… {more} more line{'' if more == 1 else 's'} (see the whole diff)"]), True
