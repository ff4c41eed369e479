"""The `task` tool: hands one research task to a read-only subagent and returns its report
(agent/subagent.py). Built per session, since the subagent spends the session's provider and
budget; the call it runs under is `running_call` (set by agent/tool_calls.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from ..cost_limit import CostLimitReached
from ..provider.base import ProviderError
from .base import Tool, ToolError, ToolHost, ToolResult, running_call

if TYPE_CHECKING:
    from ..session import AgentSession

NAME = "task"

DESCRIPTION = (
    "Hand a research task to a read-only subagent with its own context: it can read files, list, search "
    "(grep) and fetch web pages, but not edit or run commands, and answers with a report. Use it for a "
    "search across many files or a question that needs a lot of reading, so the reading does not fill "
    "this conversation. Several task calls in one step run in parallel. The prompt must say everything "
    "the subagent needs (it does not see this conversation) and what the report should contain."
)


class TaskArgs(msgspec.Struct, forbid_unknown_fields=True):
    description: Annotated[str, Meta(min_length=1, max_length=120, description="A few words on the task, shown to the user.")]
    prompt: Annotated[str, Meta(min_length=1, max_length=20_000,
                                description="The whole task for the subagent, and what its report should contain.")]


def task_tool(session: "AgentSession") -> Tool[TaskArgs]:
    async def run(host: ToolHost, args: TaskArgs) -> ToolResult:
        from ..subagent import run_subagent  # noqa: PLC0415 - subagent imports tool_calls, which imports the tools

        call = running_call.get()
        if call is None:
            raise ToolError("task runs only as a call of a turn")
        turn_id, call_id = call
        try:
            return ToolResult(await run_subagent(session, turn_id, call_id, args.prompt))
        except ProviderError as err:
            raise ToolError(f"the subagent's request failed: {err.message}") from None
        except CostLimitReached as stop:
            raise ToolError(f"the subagent stopped: {stop}") from None

    return Tool(name=NAME, description=DESCRIPTION, arguments=TaskArgs, run=run,
                summary=lambda args: f"task: {args.get('description', '')}", read_only=True)
