"""`update_short_term_memory`: the model's running summary of this session.

The model writes it (after answering, when the cadence nudge asks); it is shown back to this
session on later turns and, briefly, to other sessions of the workspace. `categories` upgrade the
free-text summary into named sections that later calls update one by one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ...state.atomic import StateError
from ...state.short_term_memory import MAX_CATEGORIES, MAX_TEXT_CHARS, StmRecord
from ..short_term_memory import TOOL_NAME, memory_text
from .base import Tool, ToolHost, ToolResult

DESCRIPTION = f"""Update this session's short-term memory: a running summary of the conversation, shown to you at the start of later turns (and briefly to the user's other sessions in this workspace), so the thread survives pruning and /compact.
Call it after you have answered the user, when a hint asks you to or when the goal or state changed a lot. Replace the summary as a whole: what the user wants, decisions made, the current state, what comes next; a few short lines, no conversation filler.
Pass `categories` ({{name: text}}) to keep named sections instead (e.g. goal, decisions, open_questions); later calls update the named sections and keep the others; an empty text removes a section.
This is not long-term memory: when the user asks you to remember something for good, use `remember` instead.
Each text is at most {MAX_TEXT_CHARS} characters; at most {MAX_CATEGORIES} sections."""

_SUMMARY_DOC = "The whole running summary, replacing the previous one (in a category block: the section `summary`)."
_CATEGORIES_DOC = "Named sections, {name: text}; updates those sections only. An empty text removes a section."


class ShortTermMemoryArgs(msgspec.Struct, forbid_unknown_fields=True):
    summary: Annotated[str, Meta(description=_SUMMARY_DOC)] | UnsetType = UNSET
    categories: Annotated[dict[str, str], Meta(description=_CATEGORIES_DOC)] | UnsetType = UNSET

Write = Callable[[str | None, dict[str, str] | None], StmRecord]


def short_term_memory_tool(write: Write) -> Tool:
    """The tool over `write(summary, categories)`, which stores and returns the merged memory."""

    async def run(host: ToolHost, args: ShortTermMemoryArgs) -> ToolResult:
        # Not given (UNSET) is None for the store; "" is a summary given empty.
        summary = None if args.summary is UNSET else args.summary
        categories = None if args.categories is UNSET else args.categories
        try:
            record = await asyncio.to_thread(write, summary, categories)
        except StateError as err:
            return ToolResult(f"short-term memory not updated: {err}", is_error=True)
        what = "category block" if record.kind == "categories" else "summary"
        return ToolResult(f"short-term memory updated ({what}):\n{memory_text(record)}")

    def summarize(args: dict[str, Any]) -> str:
        if isinstance(args.get("categories"), dict):
            return ", ".join(args["categories"])
        return str(args.get("summary", ""))[:80]

    return Tool(name=TOOL_NAME, description=DESCRIPTION, arguments=ShortTermMemoryArgs, run=run, summary=summarize,
                read_only=True)
