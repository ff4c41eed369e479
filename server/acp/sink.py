"""The agent's `EventSink` over one ACP connection.

Events, task lists and status become `session/update` notifications, sent in order by one pump
(the loop's sink calls are synchronous); approvals become `session/request_permission`, asked only
after every update before them has gone out, so the editor already shows the call it asks about.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import msgspec
from acp import schema

from ..agent.events import ApprovalAnswer, ApprovalRequest
from ..service import written_paths
from ..model.transcript import ToolCallPart, pending_calls
from . import updates
from .host import AcpToolHost, Diff, Editor

if TYPE_CHECKING:
    from ..service import LiveSession as AgentSession, ShiroService, Tool

log = logging.getLogger(__name__)

PERMISSION_OPTIONS = [
    schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    schema.PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
]
_ANSWERS: dict[str, ApprovalAnswer] = {"allow": "allow", "always": "always", "deny": "deny"}


class AcpSink:
    # ACP's permission request carries no preview of an edit; computing one would read the file
    # from the editor once more (tool_calls.py asks for it only from sinks that show it).
    shows_previews = False

    def __init__(self, editor: Editor) -> None:
        self.editor = editor
        self.service: "ShiroService | None" = None
        # Our session id -> the id the editor knows it by (they differ only for a fork on load).
        self.editor_ids: dict[str, str] = {}
        self._queue: asyncio.Queue[tuple[str, Any]] | None = None
        self._pump: asyncio.Task[None] | None = None
        self._calls: dict[tuple[str, str], ToolCallPart] = {}
        self._last_usage: dict[str, Any] = {}
        self._last_session: str | None = None  # where a question outside a turn is asked
        self._questions = 0
        self._notices = 0

    # -- sending, in order --------------------------------------------------------------
    def send(self, session_id: str, update: Any) -> None:
        self._last_session = session_id
        if self._queue is None:
            self._queue = asyncio.Queue()
        self._queue.put_nowait((self.editor_ids.get(session_id, session_id), update))
        if self._pump is None or self._pump.done():
            self._pump = asyncio.create_task(self._run_pump(self._queue))

    async def _run_pump(self, queue: asyncio.Queue[tuple[str, Any]]) -> None:
        while True:
            session_id, update = await queue.get()
            try:
                if self.editor.client is not None:
                    await self.editor.client.session_update(session_id=session_id, update=update)
            except Exception:  # a closed pipe must not break the turn; the state is still saved
                log.debug("could not send session/update", exc_info=True)
            finally:
                queue.task_done()

    async def drain(self) -> None:
        """Wait until every update queued so far has been written."""
        if self._queue is not None:
            await self._queue.join()

    # -- the EventSink seam ---------------------------------------------------------------
    def _session(self, session_id: str) -> "AgentSession | None":
        return self.service.sessions.get(session_id) if self.service is not None else None

    def _tools(self, session: "AgentSession | None") -> "dict[str, Tool]":
        return self.service.tools_by_name(session) if session is not None and self.service is not None else {}

    def event(self, payload: Any) -> None:
        event = msgspec.to_builtins(payload)
        sid, kind = event["sessionId"], event["type"]
        if kind == "text_delta" and not event.get("parentToolCallId"):
            self.send(sid, updates.helpers.update_agent_message_text(event["text"]))
        elif kind in ("reasoning_delta", "text_delta"):  # a `task` subagent's text is not the answer: a thought
            self.send(sid, updates.helpers.update_agent_thought_text(event["text"]))
        elif kind == "tool_call":
            call = ToolCallPart(event["toolCallId"], event["toolName"], event.get("input"))
            self._announce(sid, call)
        elif kind == "tool_result":
            done = self._calls.pop((sid, event["toolCallId"]), None)
            self.send(sid, updates.tool_call_done(event["toolCallId"], event["output"], bool(event.get("isError")), self._diff(sid, done)))
        elif kind in ("notice", "compacted"):
            self._notices += 1
            self.send(sid, updates.notice_update(f"shiro-notice-{self._notices}", event["message"]))
        # turn_start, queued and turn_end have no update of their own: the prompt's answer ends the turn.

    def tool_running(self, session_id: str, turn_id: str, tool_call_id: str) -> None:
        """Approved (or needing no approval): the editor shows the call as running."""
        self.send(session_id, updates.tool_call_running(tool_call_id))

    def _announce(self, sid: str, call: ToolCallPart) -> None:
        session = self._session(sid)
        if session is None:  # events only come from open sessions
            return
        self._calls[(sid, call.tool_call_id)] = call
        self.send(sid, updates.tool_call_start(session.root, self._tools(session).get(call.tool_name), call))

    def _diff(self, sid: str, call: ToolCallPart | None) -> list[Diff]:
        session = self._session(sid)
        host = self.service.host_of(session) if session is not None and self.service is not None else None
        if call is None or not isinstance(host, AcpToolHost):
            return []
        # The file of write_file/edit_file, every file of an apply_patch.
        taken = (host.take_diff(path) for path in written_paths(call.tool_name, call.input))
        return [diff for diff in taken if diff is not None]

    def todos(self, payload: Any) -> None:
        data = msgspec.to_builtins(payload)
        self.send(data["sessionId"], updates.plan_update(data["todos"]))

    def status(self, payload: Any) -> None:
        data = msgspec.to_builtins(payload)
        usage = updates.usage_update(data)
        if self._last_usage.get(data["sessionId"]) != usage:  # `running` flips alone say nothing new here
            self._last_usage[data["sessionId"]] = usage
            self.send(data["sessionId"], usage)

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        session_id, tool_name, summary, tool_call_id = request.session_id, request.tool_name, request.summary, request.tool_call_id
        session = self._session(session_id)
        if tool_call_id and (session_id, tool_call_id) not in self._calls and session is not None:
            # A call left waiting by an earlier run (resumed): the editor has not seen it yet.
            for call in pending_calls(session.messages):
                if call.tool_call_id == tool_call_id:
                    self._announce(session_id, call)
        await self.drain()
        parent = request.parent_tool_call_id
        title = summary[:1].upper() + summary[1:]
        tool_call = schema.ToolCallUpdate(
            tool_call_id=tool_call_id or tool_name,
            # A `task` subagent's call: ACP has no field for who asks, so the title says it (what
            # the user reads) and `_meta` carries the task call's id (for an editor that nests).
            title=f"{title} (asked by the task subagent)" if parent else title,
            kind=updates.tool_kind(tool_name),
            status="pending",
            field_meta={"shiro": {"parentToolCallId": parent}} if parent else None,
        )
        try:
            answer = await self.editor.client.request_permission(  # type: ignore[union-attr]
                session_id=self.editor_ids.get(session_id, session_id), tool_call=tool_call, options=PERMISSION_OPTIONS
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor could not ask: not allowed
            log.warning("session/request_permission failed: %s", exc)
            return "deny"
        outcome = answer.outcome
        if isinstance(outcome, schema.AllowedOutcome):
            return _ANSWERS.get(outcome.option_id, "deny")
        return "deny"  # cancelled: the turn is being cancelled, or the user dismissed it

    async def ask(self, message: str, actions: list[str]) -> str | None:
        """A question with buttons (trusting a project's MCP servers). ACP has no dialog of its
        own, so it is a permission request in the latest session: the first action allows, the
        others reject; None when there is no session yet or it is dismissed."""
        if self._last_session is None or self.editor.client is None or not actions:
            return None
        await self.drain()
        self._questions += 1
        options = [
            schema.PermissionOption(option_id=str(i), name=action, kind="allow_once" if i == 0 else "reject_once")
            for i, action in enumerate(actions)
        ]
        question = schema.ToolCallUpdate(tool_call_id=f"shiro-question-{self._questions}", title=message, kind="other", status="pending")
        try:
            answer = await self.editor.client.request_permission(
                session_id=self.editor_ids.get(self._last_session, self._last_session), tool_call=question, options=options
            )
        except Exception as exc:
            log.warning("question to the user failed: %s", exc)
            return None
        outcome = answer.outcome
        if isinstance(outcome, schema.AllowedOutcome) and outcome.option_id.isdigit() and int(outcome.option_id) < len(actions):
            return actions[int(outcome.option_id)]
        return None
