"""What an approval shows: the whole request, then the question (issue 35 items 4 and 6).

The request's text (`shiro-neko wants to run …: <command>`, or an MCP call with every argument)
is the model's; the server sends all of it (it no longer cuts MCP arguments at 300 characters).
Shown here:

- every character made visible (model/visible_text.py), so nothing in it can move the cursor, erase the
  lines above or redraw the question;
- a request of several lines numbered line by line, so 60 newlines cannot push its first line out
  of sight unnoticed: the numbers start at 1 and the question names the count;
- nothing cut: a long line is left to the terminal to wrap;
- the question last, after all of it, with the size of what it asks about when that is more than
  one short line ("the request above: 61 lines").
"""

from __future__ import annotations

from .render import Line
from .. import protocol as wire
from ..model.visible_text import visible

LONG_LINE = 200  # characters: past this a one-line request gets its size named in the question


def request_text(params: wire.ApproveParams) -> str:
    """`shiro/approve`'s request as one sentence that says who asks: a `task` subagent's call
    (`parentToolCallId`) is not the main agent's, and the user may not have seen that task start."""
    who = "shiro-neko's task subagent" if params.parentToolCallId else "shiro-neko"
    return f"{who} wants to {params.title}"


def request_lines(message: str) -> list[str]:
    """The request's lines, made visible (a line per line of the text; empty ones kept)."""
    return visible(message).split("\n")


def size_note(message: str) -> str:
    """" (the request above: 61 lines)", or "" for one short line."""
    lines = request_lines(message)
    if len(lines) > 1:
        return f" (the request above: {len(lines)} lines, from line 1)"
    if len(lines[0]) > LONG_LINE:
        return f" (the request above: {len(lines[0]):,} characters)"
    return ""


def approval_lines(message: str, numbered: bool = True) -> list[Line]:
    """`? request` for one line; for several, a header and every line numbered."""
    lines = request_lines(message)
    if len(lines) == 1:
        return [[("yellow", f"? {lines[0]}")]]
    if not numbered:
        return [[("yellow", f"? {lines[0]}")], *[[("yellow", f"  {line}")] for line in lines[1:]]]
    width = len(str(len(lines)))
    out: list[Line] = [[("yellow", f"? a request of {len(lines)} lines:")]]
    for number, line in enumerate(lines, 1):
        out.append([("dim", f"  {number:>{width}} │ "), ("yellow", line)])
    return out


def question(keys: str, message: str) -> str:
    """The question line, asked after the request: its keys and the request's size."""
    return f"{keys}{size_note(message)}"
