"""One turn of the agent: provider steps and tool calls until the model answers without calls.

The invariants docs/protocol.md's "Turns" sets live here, not in the pruner: no request
carries a tool call without its output; a half-received call is never run; an interrupted stream
keeps its text (without item ids, since that response never completed).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from ..protocol import (
    CompactedEvent,
    Event,
    NoticeEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolCallEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from . import context_messages, context_window, hooks, cost_limit, images, plan_mode
from .prompt import VARIANTS, build_instructions
from .prune import PrunedSpan, summary_request
from .side_request import ask_model
from .provider.base import (
    Completed,
    Notice,
    OutputStarted,
    ProviderError,
    ProviderRequest,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolSpec,
)
from .session import AgentSession
from .status import emit_status
from .short_term_memory import Plan, apply as apply_short_term_memory
from .tool_calls import ToolStepAborted, deny_pending, run_tool_step
from .turns import TurnOutcome
from ..model.checkpoint import FileChange
from ..model.transcript import (
    AssistantMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
    final_text,
    pending_calls,
    refused,
    strip_item_ids,
)
from .usage import count_usage, side_counter
from .wire_view import WireView

if TYPE_CHECKING:
    from ..config import Settings

log = logging.getLogger(__name__)

REFERENCE_LOST_NOTICE = (
    "the provider no longer had part of this session stored. Re-sent the history inline and carried on."
)


@dataclass
class TurnState:
    session: AgentSession
    turn_id: str
    text: str = ""
    refused: bool = False  # the model declined in the turn's last response
    recovered_missing_item: bool = False
    view: WireView = field(default_factory=WireView)
    prompt: str | None = None
    prompt_message: UserMessage | None = None  # where short-term memory depths are counted from
    # The turn's `<short_term_memory>` section (a stale note, agent/short_term_memory.py), restated
    # like the other context sections when pruning takes it out of view.
    memory_context: list[tuple[str, str]] = field(default_factory=list)
    spend: cost_limit.TurnSpend | None = None  # the totals at the turn's start (`maxCostUsd`)

    def emit(self, event: Event) -> None:
        self.session.deps.sink.event(event)

    def notice(self, message: str) -> None:
        self.emit(NoticeEvent(sessionId=self.session.id, turnId=self.turn_id, message=message))


async def run_turn(session: AgentSession, prompt: str | None, turn_id: str, attachments: list[str] | None = None) -> TurnOutcome:
    state = TurnState(session, turn_id)
    state.spend = cost_limit.TurnSpend.at_start(session)
    hook_notices: list[str] = []
    if prompt is not None:
        if pending_calls(session.messages):
            # A new prompt answers a call still waiting for approval as denied first.
            deny_pending(session, "denied: the user sent a new prompt instead of answering")
        # SessionStart and UserPromptSubmit hooks (agent/hooks.py): may block the prompt or add context.
        blocked, hook_context, hook_notices = await hooks.prompt_submitted(session, prompt)
        if blocked is not None:
            return hooks.blocked_turn(session, turn_id, blocked, hook_notices)
        if not session.messages and not session.title:
            session.title = prompt
        parts = [TextPart(text=prompt)] + [TextPart(text=block) for block in [*(attachments or []), *hook_context]]
        pictures = await images.prompt_images(session, turn_id, state.notice)
        state.prompt, state.prompt_message = prompt, UserMessage(content=parts, images=pictures)
        try:
            # What changed since the last turn goes before the prompt, so the prompt stays the
            # newest message of the turn's first request (agent/context_messages.py); this
            # session's stale short-term memory too (never the instructions, which stay the same).
            memory = context_messages.memory_section((await _turn_plan(state)).context, session.messages)
            state.memory_context = [(tag, body) for tag, body in memory if body != context_messages.GONE]
            await context_messages.append_changes(session, fresh=True, extra=memory)
        except Exception:  # noqa: BLE001 - the request's own check appends it after the prompt then
            log.exception("context before the prompt of turn %s", turn_id)
        session.messages.append(state.prompt_message)
        session.changed()
    session.deps.checkpoints.turn_started(session, turn_id, prompt)
    state.emit(TurnStartEvent(sessionId=session.id, turnId=turn_id))
    for notice in hook_notices:
        state.notice(notice)
    agent = session.deps.settings().agent
    if agent not in VARIANTS:
        state.notice(f"unknown agent {agent!r}; using default (known: {', '.join(VARIANTS)})")
    emit_status(session)
    try:
        outcome = await _steps(state)
        outcome = await hooks.until_stopped(session, turn_id, outcome, lambda: _steps(state))  # Stop hooks
    except asyncio.CancelledError:
        outcome = TurnOutcome("aborted", text=state.text)
    except ProviderError as err:
        outcome = TurnOutcome("error", text=state.text, error=err.message)
    except Exception as exc:
        log.exception("turn %s failed", turn_id)
        outcome = TurnOutcome("error", text=state.text, error=f"internal error: {exc}")
    try:
        await session.deps.short_term_memory.turn_ended(session, turn_id, prompt, outcome.status)
    except asyncio.CancelledError:
        pass  # run_turn absorbs its own cancellation (a second abort while the turn ends)
    files = await _record_turn_end(session, turn_id)
    compacted = state.view.take_compacted()  # the turn's deepest pruning, once, before its end
    if compacted is not None:
        state.emit(CompactedEvent(sessionId=session.id, turnId=turn_id, before=compacted.before, after=compacted.after, message=compacted.message))
    state.emit(TurnEndEvent(sessionId=session.id, turnId=turn_id, status=outcome.status, text=outcome.text,
                            error=outcome.error or None, refused=outcome.refused, files=files))
    session.changed(turn_ended=True)
    return outcome


async def _record_turn_end(session: AgentSession, turn_id: str) -> list[FileChange]:
    """The files the turn changed, from its checkpoint (`turn_end`'s `files`)."""
    # Before `turn_end`, so that a client that sees the turn over sees its checkpoint complete.
    # Shielded: a second abort while it records must not leave the checkpoint half written.
    task = asyncio.ensure_future(session.deps.checkpoints.turn_ended(session, turn_id))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        pass
    except Exception:
        log.exception("recording the end of turn %s failed", turn_id)
    return []


async def _steps(state: TurnState) -> TurnOutcome:
    session = state.session
    # MCP servers still starting get a few seconds; a resumed approval may be an MCP call too.
    for notice in await session.deps.before_turn(session):
        state.notice(notice)
    steps = 0
    while True:
        if pending_calls(session.messages):
            try:
                await session.deps.checkpoints.before_tools(session, state.turn_id)
                await run_tool_step(session, state.turn_id)
            except ToolStepAborted:
                return TurnOutcome("aborted", text=state.text)
            session.changed()
            continue
        settings = session.deps.settings()
        if steps >= settings.maxSteps:
            state.notice(f"stopped after {steps} provider requests (maxSteps = {settings.maxSteps}); send a prompt to continue")
            return TurnOutcome("completed", text=state.text, max_steps_reached=True)
        steps += 1
        try:
            message = await _provider_step(state)
        except cost_limit.CostLimitReached as stop:
            state.notice(str(stop))
            return TurnOutcome("completed", text=state.text)
        if not any(isinstance(p, ToolCallPart) for p in message.content):
            return TurnOutcome("completed", text=state.text, refused=state.refused)


async def _turn_plan(state: TurnState) -> Plan:
    """The turn's short-term memory plan, made before its prompt is appended (the feature keeps it
    for the turn's requests): under the settings its requests will have, the compaction threshold
    capped as `_fit_window` does with what is known before the first request."""
    session = state.session
    settings = session.deps.settings()
    tools = session.deps.tools(session) if settings.supportsTools else []
    window = context_window.window_for(settings.effective_base_url, settings.effective_model, settings.contextWindow)
    threshold = context_window.capped_threshold(settings.compactThreshold, window, session.prefix_tokens)
    if threshold != settings.compactThreshold:
        settings = msgspec.structs.replace(settings, compactThreshold=threshold)
    offered = plan_mode.offered(session, tools)
    return await session.deps.short_term_memory.plan(session, state.turn_id, state.prompt, settings, bool(offered))


async def _request(state: TurnState) -> ProviderRequest:
    session = state.session
    settings = session.deps.settings()
    tools = session.deps.tools(session) if settings.supportsTools else []
    # Plan mode offers the read-only tools only; the instructions are built from the whole list,
    # so a switch leaves them byte-identical (agent/plan_mode.py).
    specs = [ToolSpec(t.name, t.description, t.parameters) for t in plan_mode.offered(session, tools)]
    instructions = build_instructions(session, settings, [t.name for t in tools])
    effort = settings.reasoningEffort
    if effort is not None or session.state.reasoning_effort is not msgspec.UNSET:
        session.state.reasoning_effort = effort
    # What changed around the conversation is appended as a context message; the instructions
    # and tools stay the same bytes (agent/context_messages.py). A tool step since the last
    # request may have changed git status: it is asked again.
    ran_tools = bool(session.messages) and isinstance(session.messages[-1], ToolMessage)
    context = await context_messages.append_changes(session, fresh=ran_tools)
    settings = await _fit_window(state, settings, instructions, specs)

    async def summarize(span: PrunedSpan) -> str:
        instructions_, text = summary_request(span)
        provider = session.deps.provider(settings)
        return await ask_model(provider, settings.effective_model, instructions_, text, side_counter(session, settings.effective_model))

    # Short-term memory counts against compactThreshold: the plan comes first and pruning makes room
    # for its notes (each bounded, server/agent/short_term_memory.py), so no request passes the budget.
    plan = await session.deps.short_term_memory.plan(session, state.turn_id, state.prompt, settings, bool(specs))
    # The fail-safe covers placement too (docs/short-term-memory.md: any error while assembling
    # the notes logs a warning and the turn goes on without them): the plan's size and its
    # application to the request are short-term memory's work, not the turn's.
    try:
        reserve = plan.tokens()
    except Exception as exc:  # noqa: BLE001 - never fails a turn
        log.warning("short-term memory left out of this request: %s", exc)
        plan, reserve = Plan(), 0
    messages = await state.view.for_wire(session, settings, summarize, reserve=reserve)
    if context_messages.restate(session, [*context, *state.memory_context], messages):
        # Pruning took context out of the view: restated at the end, the view extends with it.
        messages = await state.view.for_wire(session, settings, summarize, reserve=reserve)
    try:
        stm = apply_short_term_memory(plan, session.messages, messages, state.prompt_message)
    except Exception as exc:  # noqa: BLE001 - never fails a turn
        log.warning("short-term memory left out of this request: %s", exc)
        return ProviderRequest(settings.effective_model, instructions, messages, specs, reasoning_effort=effort)
    return ProviderRequest(
        settings.effective_model, instructions, stm.messages, specs, stm.inserts,
        tool_free_inserts=stm.tool_free_inserts, tool_free_messages=stm.tool_free_messages, reasoning_effort=effort,
    )


async def _fit_window(state: TurnState, settings: "Settings", instructions: str, specs: list[ToolSpec]) -> "Settings":
    """The settings with the compaction threshold capped below the model's context window
    (agent/context_window.py); a notice, once per session, when the window cannot even hold the
    instructions and tools."""
    session = state.session
    model, base_url = settings.effective_model, settings.effective_base_url
    probe = context_window.probe_soon(base_url, model, lambda: emit_status(session))
    if probe is not None:
        # The first request to an endpoint waits for its answer (at most the probe's timeout, once):
        # a local engine's small window matters from the first request on.
        await asyncio.wait({probe}, timeout=context_window.TIMEOUT * 3)
    window = context_window.window_for(base_url, model, settings.contextWindow)
    session.prefix_tokens = (len(instructions) + len(json.dumps([s.__dict__ for s in specs]))) // 4
    session.context_window = window
    if window is not None and window < session.prefix_tokens * 2 and not session.window_told:
        session.window_told = True
        state.notice(
            f"the model's context window is {window} tokens, too small for the instructions and tool "
            f"definitions (about {session.prefix_tokens} tokens) and a conversation: the endpoint will cut "
            "them. Load the model with a larger window (Ollama: num_ctx or OLLAMA_CONTEXT_LENGTH; "
            "llama.cpp: --ctx-size) or set shiro.contextWindow if the endpoint reports it wrong.")
    threshold = context_window.capped_threshold(settings.compactThreshold, window, session.prefix_tokens)
    return settings if threshold == settings.compactThreshold else msgspec.structs.replace(settings, compactThreshold=threshold)


async def _provider_step(state: TurnState) -> AssistantMessage:
    session = state.session
    while True:
        request = await _request(state)
        # Before anything is sent: a request that would pass `maxCostUsd` ends the turn (cost_limit.py).
        told = cost_limit.check(session, request, session.deps.settings().maxCostUsd,
                                state.spend or cost_limit.TurnSpend.at_start(session))
        if told is not None:
            state.notice(told)
        await images.attach(session, request, state.notice)
        provider = session.deps.provider(session.deps.settings())
        received: list[str] = []
        refusal: list[str] = []  # kept apart: an interrupted refusal is still saved as one
        output_started = False
        try:
            async for event in provider.stream(request):
                if isinstance(event, (TextDelta, RefusalDelta)):
                    # A refusal streams as the assistant's text: every client shows it as it is.
                    (refusal if isinstance(event, RefusalDelta) else received).append(event.text)
                    state.emit(TextDeltaEvent(sessionId=session.id, turnId=state.turn_id, text=event.text))
                elif isinstance(event, ReasoningDelta):
                    state.emit(ReasoningDeltaEvent(sessionId=session.id, turnId=state.turn_id, text=event.text))
                elif isinstance(event, OutputStarted):
                    output_started = True
                elif isinstance(event, Notice):
                    state.notice(event.message)
                elif isinstance(event, Completed):
                    return _accept(state, event)
            raise ProviderError("the provider stream ended without a response")
        except ProviderError as err:
            if err.missing_item is not None and not output_started and not state.recovered_missing_item:
                # Retrying the same references fails identically: rewrite our own history inline, once.
                state.recovered_missing_item = True
                session.messages = strip_item_ids(session.messages)
                state.view.reset()
                session.changed()
                state.notice(REFERENCE_LOST_NOTICE)
                continue
            _keep_interrupted(state, received, refusal)
            raise
        except asyncio.CancelledError:
            _keep_interrupted(state, received, refusal)
            raise


def _keep_interrupted(state: TurnState, received: list[str], refusal: list[str]) -> None:
    text, refused_text = "".join(received), "".join(refusal)
    # Text only, and no item id: that response never completed, and a half-received call is never run.
    parts = [TextPart(text=text)] if text else []
    if refused_text:
        parts.append(TextPart(text=refused_text, refusal=True))
    if parts:
        state.session.messages.append(AssistantMessage(content=list(parts)))
        state.text = text + refused_text
        state.session.changed()


def _accept(state: TurnState, event: Completed) -> AssistantMessage:
    session = state.session
    message = event.message
    session.messages.append(message)
    count_usage(session, event.usage, session.deps.settings().effective_model)
    text = final_text(message)
    if text:
        state.text = text
    state.refused = refused(message)
    for part in message.content:
        if isinstance(part, ToolCallPart):
            state.emit(
                ToolCallEvent(
                    sessionId=session.id, turnId=state.turn_id,
                    toolCallId=part.tool_call_id, toolName=part.tool_name, input=part.input,
                )
            )
    session.changed()
    emit_status(session)
    return message

