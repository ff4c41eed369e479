"""What each session's agent last saw of a file, so write_file never overwrites a change it has
not seen (issue 37: the user edits a file after the agent read it; a whole-file write would
silently throw that edit away).

Kept per tool host: every session gets its own host (`host_for(root, session_id)` in the bridges),
so two sessions never vouch for each other's reads. A digest of the text as the file tools read
it (the editor's buffer when open, else the disk), so a buffer edit counts as a change too.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from pathlib import Path

from .base import ToolHost

# Paths remembered per session; the oldest are forgotten first (a forgotten file is treated as
# never seen, which write_file allows: the guard is about changes after a read, not a read-first rule).
MAX_PATHS = 4096

_seen: "weakref.WeakKeyDictionary[object, OrderedDict[Path, str]]" = weakref.WeakKeyDictionary()


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def remember(host: ToolHost, path: Path, text: str) -> None:
    """The agent has just read or written `text` as `path`'s whole content."""
    try:
        table = _seen.setdefault(host, OrderedDict())
    except TypeError:  # a host that cannot be weakly referenced keeps no record
        return
    table[path] = digest(text)
    table.move_to_end(path)
    while len(table) > MAX_PATHS:
        table.popitem(last=False)


def last_seen(host: ToolHost, path: Path) -> str | None:
    """The digest of what the agent last read or wrote as `path`, or None when it never did."""
    try:
        table = _seen.get(host)
    except TypeError:
        return None
    return None if table is None else table.get(path)
