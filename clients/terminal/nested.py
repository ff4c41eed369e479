"""A `task` subagent's progress in the terminal (issue 40): its calls, results and notices as dim
lines indented under the task call; its streamed text is not shown (the report is the task call's
result, shown when it returns)."""

from __future__ import annotations

from .. import protocol as wire
from . import render

INDENT = "    ┆ "


def parent_of(event: wire.Event) -> str | None:
    """The task call a subagent's event runs under, else None."""
    parent = getattr(event, "parentToolCallId", None)
    return parent if isinstance(parent, str) else None


def lines(event: wire.Event, tools: render.ToolNames) -> list[render.Line]:
    if isinstance(event, (wire.TextDeltaEvent, wire.ReasoningDeltaEvent)):
        return []
    return [[("dim", INDENT), *(("dim", text) for _, text in line)] for line in render.event_lines(event, tools)]
