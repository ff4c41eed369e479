"""The beginning of a text on one line, for titles and short excerpts.

A title or an excerpt shows at most a few hundred characters, but the text may be a 480 KB
prompt, and the title is made on every autosave of every step: collapsing all of its white space
each time cost milliseconds per step. Only as much of the text as can decide the result is read.
"""

from __future__ import annotations


def one_line_head(text: str, limit: int) -> str:
    """`" ".join(text.split())` when that is at most `limit` characters long; otherwise a prefix of
    it longer than `limit` (all that a cut at `limit` needs to see)."""
    size = max(limit * 4, 256)
    while True:
        head = " ".join(text[:size].split())
        # A prefix's collapsed form is a prefix of the whole's, so once it is past `limit` the
        # first `limit` characters are final; a prefix that is the whole text is exact.
        if len(head) > limit or size >= len(text):
            return head
        size *= 4
