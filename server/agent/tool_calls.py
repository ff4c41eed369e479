"""Running one step's tool calls: approval, execution, and exactly one result per call.

All of a step's results go into one `tool` message. An abort gives every call that has no result
yet the output `aborted by the user`; a server that stops leaves a call waiting for approval
pending in the record, which is how a suspended approval survives to the next resume.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ..model.unified_diff import capped, diff_lines
from ..model.visible_text import visible
from ..protocol import DIFF_CAP, NoticeEvent, ToolResultEvent
from . import hooks
from .events import AlwaysIn, ApprovalRequest, Denied
from . import plan_mode
from .images import result_images
from .permissions import decide, narrowest_rules, remember_for_session
from .session import AgentSession
from .status import emit_status
from .tools.base import Tool, ToolError, running_call
from .tools.apply_patch import written_paths
from .tools.git_metadata import git_metadata_reason
from .tools.files import editor_or_disk_text
from .tools.registry import run_tool
from .tools.workspace_paths import resolve_workspace_path, workspace_relative
from ..model.transcript import ToolCallPart, ToolMessage, ToolResultPart, pending_calls

ABORTED_OUTPUT = "aborted by the user"
# `task` calls (agent/tools/task.py) of one step that run at once; more wait for the first ones.
TASK = "task"
MAX_PARALLEL_TASKS = 3


class ToolStepAborted(Exception):
    """The user aborted while this step's tools ran."""


def needs_approval(tool: Tool, approvals: str) -> bool:
    if tool.approval == "unsandboxed-command":
        return True  # a sandbox that cannot be enforced is no sandbox: never run unasked
    if tool.approval is None or approvals == "auto":
        return False
    if approvals == "auto-edit":
        # A command runs without asking only inside a sandbox, which bounds what it can change.
        return tool.approval == "command"
    return True


def describe_call(tool: Tool | None, call: ToolCallPart) -> str:
    """The approval dialog's text: what exactly would run or change, every argument in full (the
    clients wrap it; a cut would hide what comes after it, issue 35: `"command": "rm -rf ~"`)."""
    args = call.input if isinstance(call.input, dict) else {}
    text = ""
    if tool is not None:
        try:
            text = tool.summary(args)
        except Exception:  # a summary is a courtesy; never fail the call over it
            text = ""
    if not text:
        text = f"use {call.tool_name} {json.dumps(call.input, ensure_ascii=False)}"
    # Shown, not obeyed, by every client: a bidi override reorders the command in VS Code's card
    # and Emacs's minibuffer as it would on a terminal, and an escape acts on a terminal
    # (model/visible_text.py; the terminal client applies the same function again, to no effect).
    return visible(text)


def guarded_write(tool: Tool, call: ToolCallPart, root: Path) -> str | None:
    """Why this call must be asked about whatever the approval mode, or None: an edit tool writing
    git metadata (tools/git_metadata.py), or a tool's own `always_ask` (a widened sandbox, a web
    fetch). "Always allow" never covers it."""
    if tool.always_ask is not None and isinstance(call.input, dict):
        try:
            return tool.always_ask(call.input)
        except Exception:  # from unchecked arguments: when in doubt, ask
            return "its arguments could not be read"
    if tool.approval != "edit" or not isinstance(call.input, dict):
        return None
    return git_metadata_reason(root, call.input.get("path"))


def allowance_key(tool: Tool, call: ToolCallPart, root: Path) -> str:
    """What an "always allow" answer covers for the rest of the session: this exact call, not the
    tool (issue 35: one yes to `npm test` let `npm test; echo EVIL` and `rm -rf src` run unasked).
    run_command: the exact command string in the same workdir (its timeout aside). Edit tools: the same file (resolved,
    so `./a.py` and `a.py` are one), whatever the new text. Anything else (MCP tools): the exact
    arguments."""
    args = call.input if isinstance(call.input, dict) else {}
    if tool.name == "run_command":
        workdir = args.get("workdir")
        # Another folder runs another Makefile, another script: not the same call.
        what: object = {"command": args.get("command")} if workdir in (None, "", ".") else {
            "command": args.get("command"), "workdir": workdir}
    elif tool.approval == "edit" and isinstance(args.get("path"), str):
        try:
            what = {"path": str(resolve_workspace_path(root, args["path"]))}
        except ToolError:
            what = {"path": args["path"]}
    else:
        what = call.input
    return tool.name + "\0" + json.dumps(what, sort_keys=True, ensure_ascii=False)


def denied_by_rule(rule: str) -> str:
    """The tool result of a call a deny rule refused: which rule, and what the model can do."""
    return (f"denied by the permission rule {rule} (permissions.deny in the user's or the project's "
            "settings); the call was not run. Do not retry it in another form; if it is needed, ask the user.")


def deny_pending(session: AgentSession, reason: str) -> None:
    calls = pending_calls(session.messages)
    if calls:
        session.messages.append(
            ToolMessage(
                content=[
                    ToolResultPart(tool_call_id=c.tool_call_id, tool_name=c.tool_name, output=reason, is_error=True)
                    for c in calls
                ]
            )
        )
        session.changed()


async def _preview(tool: Tool, session: AgentSession, call: ToolCallPart) -> tuple[Path, str] | None:
    if tool.preview is None or not isinstance(call.input, dict):
        return None
    try:
        return await tool.preview(session.deps.host, call.input)
    except Exception:  # a preview is a courtesy; the call is still asked about
        return None


async def _diff(session: AgentSession, tool: Tool, call: ToolCallPart, preview: tuple[Path, str] | None) -> tuple[str | None, int]:
    """The approval's unified diff of an edit (`ApproveParams.diff`), capped, and its whole
    length: every file of a call that changes several (apply_patch), one after the other."""
    files: list[tuple[Path, str | None]] = [preview] if preview is not None else []
    if tool.changes is not None and isinstance(call.input, dict):
        try:
            files = await tool.changes(session.deps.host, call.input)
        except Exception:  # a diff is a courtesy, as the preview is; the call is still asked about
            files = []
    lines: list[str] = []
    for path, new_text in files:
        lines += await _file_diff(session, path, new_text)
    text, _ = capped(lines, DIFF_CAP)
    return (text or None), len(lines)


async def _file_diff(session: AgentSession, path: Path, new_text: str | None) -> list[str]:
    shown = workspace_relative(session.root, path)
    try:
        old: str | None = await editor_or_disk_text(session.deps.host, path, shown)
    except ToolError as exc:
        if not str(exc).startswith("file not found"):
            return []  # binary or unreadable: the title says what the call does
        old = None
    return diff_lines(shown, old, new_text)


def _denial_text(tool: Tool, answer: object) -> str:
    """The tool result of a denied call: the user's reason when they gave one."""
    if isinstance(answer, Denied):
        return f"The user denied this call: {answer.reason}"
    return tool.denied or "denied: the user did not allow this call"


async def _run_one(session: AgentSession, tools: dict[str, Tool], call: ToolCallPart, turn_id: str,
                   parent_id: str | None = None) -> ToolResultPart:
    """`parent_id`: the `task` call whose subagent makes this call (its approval says so)."""
    tool = tools.get(call.tool_name)
    # `tools` is the plan set already in plan mode; a switch since it was built is caught here too.
    refused = plan_mode.refused(session, tool, call.tool_name, call.input)
    if refused is not None:
        return ToolResultPart(call.tool_call_id, call.tool_name, refused, True)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return ToolResultPart(call.tool_call_id, call.tool_name, f"unknown tool {call.tool_name!r}; available: {known}", True)
    settings = session.deps.settings()
    # In a thread: parsing a long command (up to permissions.MAX_COMMAND_CHARS) takes up to ~0.5 s.
    rule = await asyncio.to_thread(decide, session.deps.rules(settings.permissions), list(session.permission_rules),
                                   tool.name, call.input, session.root)
    if rule is not None and rule.kind == "deny":
        return ToolResultPart(call.tool_call_id, call.tool_name, denied_by_rule(rule.rule), True)
    # PreToolUse hooks (agent/hooks.py): deny stops the call; ask, or a hook that failed, asks the
    # user; allow skips the question as an allow rule would (never for a guarded write).
    hooked = await hooks.before_tool(session, turn_id, tool.name, call.tool_call_id, call.input)
    if hooked.decision == "deny":
        return ToolResultPart(call.tool_call_id, call.tool_name, hooks.denied_text(hooked), True)
    hook_asks = hooks.asked_because(hooked)
    guarded = guarded_write(tool, call, session.root)
    if rule is not None and rule.kind == "allow" and tool.name == "web_fetch":
        guarded = None  # a `WebFetch(domain:…)` allow rule is one more webFetchAllowedDomains entry
    # An allow rule never covers a command that cannot be sandboxed, nor a guarded write (above).
    allowed = ((rule is not None and rule.kind == "allow") or (hooked.decision == "allow" and hook_asks is None)) \
        and tool.approval != "unsandboxed-command"
    asked_by = rule.rule if rule is not None and rule.kind == "ask" else None
    key = allowance_key(tool, call, session.root)
    unasked = guarded is None and tool.unasked is not None and isinstance(call.input, dict) and tool.unasked(call.input)
    if guarded is not None or asked_by is not None or hook_asks is not None or (
            needs_approval(tool, settings.approvals) and key not in session.always_allowed
            and not unasked and not allowed):
        summary = describe_call(tool, call)
        # Only for sinks that show it: ACP editors have no use for it, and computing it
        # would read the file from the editor once more.
        preview = await _preview(tool, session, call) if getattr(session.deps.sink, "shows_previews", True) else None
        shows = getattr(session.deps.sink, "shows_previews", True)
        diff, diff_count = await _diff(session, tool, call, preview) if shows else (None, 0)
        request = ApprovalRequest(
            session_id=session.id,
            turn_id=turn_id,
            tool_call_id=call.tool_call_id,
            tool_name=tool.name,
            input=call.input,
            summary=(f"{summary} (always asked: {guarded})" if guarded
                     else f"{summary} (asked by the permission rule {asked_by})" if asked_by
                     else f"{summary} ({hook_asks})" if hook_asks else summary),
            preview=preview,
            diff=diff,
            diff_lines=diff_count,
            parent_tool_call_id=parent_id,
        )
        # Visible while it waits (`shiro/status` `waiting: "approval"`): a client whose dialog
        # was dismissed without an answer still shows why the turn does not move.
        session.waiting_approval = request
        emit_status(session)
        try:
            answer = await session.deps.sink.approve(request)
        finally:
            if session.waiting_approval is request:
                session.waiting_approval = None
            emit_status(session)
        if answer == "deny" or isinstance(answer, Denied):
            return ToolResultPart(call.tool_call_id, call.tool_name, _denial_text(tool, answer), True)
        if plan_mode.mode_of(session) == "plan" and not tool.read_only:
            # Switched to plan mode while the question was open: the yes was for act mode.
            return ToolResultPart(call.tool_call_id, call.tool_name, plan_mode.refusal(call.tool_name), True)
        if (answer == "always" or isinstance(answer, AlwaysIn)) and guarded is None:  # a guarded write: this once only
            # Its narrowest rule (`npm test` -> `Bash(npm test:*)`), never a whole tool; the exact
            # call only when no rule can say it (a redirection, an unsandboxed command), so
            # removing the rule (`/permissions`) asks again.
            rules = narrowest_rules(tool.name, call.input)
            if not rules or tool.approval == "unsandboxed-command":
                session.always_allowed.add(key)
            if isinstance(answer, AlwaysIn) and rules:
                _keep_rules(session, turn_id, rules, answer.scope)
            else:
                remember_for_session(session.permission_rules, rules)
                if isinstance(answer, AlwaysIn):  # an edit, a redirection: no rule says it, so not kept beyond
                    session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=(
                        "no permission rule can describe this call: it is allowed again for this session only")))
    session.deps.sink.tool_running(session.id, turn_id, call.tool_call_id)
    token = running_call.set((turn_id, call.tool_call_id))  # the `task` tool's subagent runs under it
    try:
        result = await run_tool(tool, session.deps.host, call.input)
    finally:
        running_call.reset(token)
    if isinstance(call.input, dict) and not result.is_error:
        # The folders a call looked into or wrote to (their AGENTS.md becomes context): `path`, or
        # every file of an apply_patch.
        path = call.input.get("path")
        for named in [path] if isinstance(path, str) else written_paths(call.tool_name, call.input):
            session.touched.add(session.root / named)
    if result.notice:
        session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=result.notice))
    pictures, refused = await result_images(session, result.image)
    told = await hooks.after_tool(session, turn_id, tool.name, call.tool_call_id, call.input, result.output, result.is_error)
    return ToolResultPart(call.tool_call_id, call.tool_name, result.output + refused + told, result.is_error, pictures)


def _keep_rules(session: AgentSession, turn_id: str, rules: list[str], scope: str) -> None:
    """"Always allow" for the workspace or the user: written to its file, or, when that fails,
    kept for the session with a notice saying why (the user's yes still counts)."""
    try:
        session.deps.save_rules(session, rules, scope)
    except (OSError, ValueError) as exc:
        remember_for_session(session.permission_rules, rules)
        session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=(
            f"could not save {', '.join(rules)} for the {scope} ({exc}); kept for this session only")))
        return
    where = {"workspace": "in this folder", "user": "everywhere (your settings file)"}.get(scope, f"({scope})")
    session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=(
        f"allowed from now on {where}: {', '.join(rules)} · /permissions lists and removes rules")))


def _emit_result(session: AgentSession, turn_id: str, result: ToolResultPart) -> None:
    session.deps.sink.event(
        ToolResultEvent(
            sessionId=session.id, turnId=turn_id,
            toolCallId=result.tool_call_id, output=result.output, isError=result.is_error,
        )
    )


def _groups(calls: list[ToolCallPart]) -> list[list[ToolCallPart]]:
    """The calls in order, consecutive `task` calls together, at most MAX_PARALLEL_TASKS a group."""
    groups: list[list[ToolCallPart]] = []
    for call in calls:
        last = groups[-1] if groups else None
        if (last is not None and call.tool_name == TASK and last[-1].tool_name == TASK
                and len(last) < MAX_PARALLEL_TASKS):
            last.append(call)
        else:
            groups.append([call])
    return groups


async def run_tool_step(session: AgentSession, turn_id: str) -> None:
    calls = pending_calls(session.messages)
    tools = {t.name: t for t in plan_mode.offered(session, session.deps.tools(session))}
    results: list[ToolResultPart] = []
    try:
        for group in _groups(calls):
            # Task calls side by side run together (their subagents in parallel), in order otherwise.
            done = await asyncio.gather(*(_run_one(session, tools, c, turn_id) for c in group)) if len(group) > 1 \
                else [await _run_one(session, tools, group[0], turn_id)]
            for result in done:
                results.append(result)
                _emit_result(session, turn_id, result)
    except asyncio.CancelledError:
        if not session.turns.stopping:
            for call in calls[len(results):]:
                aborted = ToolResultPart(call.tool_call_id, call.tool_name, ABORTED_OUTPUT, True)
                results.append(aborted)
                _emit_result(session, turn_id, aborted)
        if results:
            session.messages.append(ToolMessage(content=results))
            session.changed()
        raise ToolStepAborted() from None
    session.messages.append(ToolMessage(content=results))

