"""Text from outside the client made safe to put on a terminal (issue 35 item 4).

Model text, tool output, MCP results, session titles, notices, the server's messages and every
workspace file are untrusted. A terminal obeys the control characters in what it is sent: OSC 52
writes the clipboard, OSC 0 the window title, OSC 8 hides a link behind other text, CSI moves the
cursor and erases lines (a command's tail erased the real approval and redrew `npm test`), a
carriage return or backspace overwrites what was printed, and a bidi override shows `rm -rf ~` as
something else. So every such character is *shown*, never sent: C0 controls in caret notation
(`ESC` → `^[`, so a CSI reads `^[[2K` and an OSC 52 `^[]52;c;…^G`), DEL as `^?`, and C1 controls,
bidi controls, line/paragraph separators and lone surrogates as `⟨U+XXXX⟩`. What remains cannot
move the cursor or change the terminal's state: the sequence's bytes are printed as plain text.

Kept as they are: newline (the text's own line structure; a line cannot overwrite the one before)
and, unless asked otherwise, tab (it only advances the cursor and never hides a character).

The bidi set is every Unicode bidi control: the embeddings and overrides (U+202A-202E), the
isolates (U+2066-2069) and the implicit marks (U+200E LRM, U+200F RLM, U+061C ALM). The marks are
invisible and reorder the neutral characters (spaces, punctuation, digits) around them: in a shell
command that is enough to change what the eye reads, and nothing legitimate in a command or a
title needs them. Zero-width joiners stay: emoji and several scripts are built with them and they
reorder nothing.

The client's own styling (colours from render.py, rich's markdown rendering) is added *after*
this, to text that has passed through it, and so keeps working.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Everything shown visibly, whatever the caller: C0 but \t and \n, DEL, C1, bidi, U+2028/2029
# (which Python's splitlines and some renderers take as line breaks), lone surrogates (they would
# also make the write to stdout raise).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "\u2028\u2029\ud800-\udfff]")
_UNSAFE_OR_TAB = re.compile("[\t" + _UNSAFE.pattern[1:])


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)  # ESC -> ^[, BEL -> ^G, CR -> ^M, as `cat -v` shows them
    if code == 0x7F:
        return "^?"
    return f"⟨U+{code:04X}⟩"


def visible(text: str, tabs: bool = True) -> str:
    """`text` with every character that could act on a terminal shown instead; newlines kept, and
    tabs unless `tabs` is False (a one-line field, where a tab is shown as `^I`)."""
    return (_UNSAFE if tabs else _UNSAFE_OR_TAB).sub(_shown, text)


def is_safe(text: str) -> bool:
    """True when `visible` would change nothing (what the tests and asserts check)."""
    return _UNSAFE.search(text) is None


_JSON_UNSAFE = re.compile("[\x7f-\x9f" + _BIDI + "\u2028\u2029\ud800-\udfff]")


def json_visible(encoded: str) -> str:
    """JSON text (from json.dumps with ensure_ascii=False) with the characters above written as
    `\\uXXXX` escapes: the same JSON value, nothing a terminal acts on. json.dumps escapes C0
    itself; these characters can only occur inside strings, where the escape is valid."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
