"""A `task` subagent: a read-only explorer with its own context that reports back (issue 40).

It runs inside the parent's tool step: its own transcript (never saved as a session), its own
instructions, only the reading tools (`READ_ONLY_TOOLS`, those the session offers), and at most
`subagentMaxSteps` provider requests; then one request without tools asks for the report. Each
call goes through the parent's `_run_one` (agent/tool_calls.py), so permission rules and
approvals apply exactly as they do to the parent (an approval it raises carries the task call's id,
`parentToolCallId`, so the user knows who asks); a tool it was not offered (edit_file,
run_command) is refused as unknown, never run. Its requests count in the session's usage and
cost. Its events carry `parentToolCallId`, the task call's id, so clients nest them under it.
Abort cancels the parent's step, and with it every subagent (their requests and tools).

The report is model output like any other tool result: the parent model reads it; it cannot
answer an approval or change a setting (nothing here reads it but the parent's next request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.transcript import AssistantMessage, Message, ToolCallPart, ToolMessage, ToolResultPart, estimate_tokens, final_text, user_text
from ..protocol import NoticeEvent, ReasoningDeltaEvent, TextDeltaEvent, ToolCallEvent, ToolResultEvent
from .provider.base import Completed, Notice, ProviderError, ProviderRequest, ReasoningDelta, RefusalDelta, TextDelta, ToolSpec
from . import cost_limit
from .status import emit_status
from .tool_calls import _run_one
from .usage import count_usage

if TYPE_CHECKING:
    from .session import AgentSession
    from .tools.base import Tool

#: The tools a subagent may be offered (of those the session has): reading and searching only.
READ_ONLY_TOOLS = ("read_file", "list_files", "grep", "web_fetch", "diagnostics", "find_definition",
                   "find_references", "workspace_symbols")
#: The report as the parent reads it.
MAX_REPORT_CHARS = 20_000

INSTRUCTIONS = """You are a read-only research subagent of a coding agent. The agent gave you one task; \
carry it out with the tools you have (reading files, listing, searching, fetching web pages) and then \
answer with a report. You cannot change files or run commands; do not try. Be efficient: search \
before reading, read only the parts that matter. Your final answer is all the agent sees: give the \
findings it asked for, concretely (file paths with line numbers, names, short quotes), and say what \
you could not find. No preamble."""

REPORT_NOW = ("Stop using tools now and write your report from what you found so far "
              "(say what you did not get to).")


def offered_tools(session: "AgentSession") -> list["Tool"]:
    return [t for t in session.deps.tools(session) if t.name in READ_ONLY_TOOLS]


async def run_subagent(session: "AgentSession", turn_id: str, parent_id: str, task: str) -> str:
    """The subagent's report (capped), after at most `subagentMaxSteps` requests."""
    settings = session.deps.settings()
    tools = {t.name: t for t in offered_tools(session)}
    specs = [ToolSpec(t.name, t.description, t.parameters) for t in tools.values()]
    messages: list[Message] = [user_text(task)]
    text = ""
    # `maxCostUsd` from the subagent's start (cost_limit.py); the parent's next request checks the
    # whole turn, the subagent's spending included (it is the session's).
    spend = cost_limit.TurnSpend.at_start(session)
    for step in range(settings.subagentMaxSteps + 1):
        # The last request, or a context grown past the compaction threshold: no tools, report.
        last = step == settings.subagentMaxSteps or estimate_tokens(messages) > settings.compactThreshold
        if last:
            messages.append(user_text(REPORT_NOW))
        request = ProviderRequest(settings.effective_model, INSTRUCTIONS, list(messages), [] if last else specs,
                                  reasoning_effort=settings.reasoningEffort)
        told = cost_limit.check(session, request, settings.maxCostUsd, spend)  # CostLimitReached: the task fails
        if told is not None:
            session.deps.sink.event(_notice(session, turn_id, parent_id, told))
        message = await _request(session, turn_id, parent_id, request)
        messages.append(message)
        text = final_text(message) or text
        calls = [p for p in message.content if isinstance(p, ToolCallPart)]
        if last or not calls:
            break
        results: list[ToolResultPart] = []
        for call in calls:
            result = await _run_one(session, tools, call, turn_id, parent_id)
            results.append(result)
            session.deps.sink.event(ToolResultEvent(
                sessionId=session.id, turnId=turn_id, toolCallId=result.tool_call_id, output=result.output,
                isError=result.is_error, parentToolCallId=parent_id))
        messages.append(ToolMessage(content=results))
    report = text.strip() or "(the subagent gave no report)"
    if len(report) > MAX_REPORT_CHARS:
        report = report[:MAX_REPORT_CHARS] + f"\n[report cut at {MAX_REPORT_CHARS:,} characters]"
    return report


async def _request(session: "AgentSession", turn_id: str, parent_id: str, request: ProviderRequest) -> AssistantMessage:
    provider = session.deps.provider(session.deps.settings())
    async for event in provider.stream(request):
        if isinstance(event, (TextDelta, RefusalDelta)):
            session.deps.sink.event(TextDeltaEvent(sessionId=session.id, turnId=turn_id, text=event.text,
                                                   parentToolCallId=parent_id))
        elif isinstance(event, ReasoningDelta):
            session.deps.sink.event(ReasoningDeltaEvent(sessionId=session.id, turnId=turn_id, text=event.text,
                                                        parentToolCallId=parent_id))
        elif isinstance(event, Notice):
            session.deps.sink.event(_notice(session, turn_id, parent_id, event.message))
        elif isinstance(event, Completed):
            count_usage(session, event.usage, request.model)  # the subagent's cost is the session's
            emit_status(session)
            for part in event.message.content:
                if isinstance(part, ToolCallPart):
                    session.deps.sink.event(ToolCallEvent(
                        sessionId=session.id, turnId=turn_id, toolCallId=part.tool_call_id,
                        toolName=part.tool_name, input=part.input, parentToolCallId=parent_id))
            return event.message
    raise ProviderError("the provider stream ended without a response")


def _notice(session: "AgentSession", turn_id: str, parent_id: str, message: str) -> NoticeEvent:
    return NoticeEvent(sessionId=session.id, turnId=turn_id, message=f"task: {message}", parentToolCallId=parent_id)

