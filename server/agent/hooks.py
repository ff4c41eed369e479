"""Hooks (docs/extending.md): the user's commands run at points of a turn, with Claude Code's
event names, settings shape and JSON on stdin and stdout, so scripts written for it run as they are.

`hooks` setting: `{"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command",
"command": "...", "timeout": 60}]}], ...}`. Events: PreToolUse (allow, deny with a reason, ask),
PostToolUse, UserPromptSubmit (may block the prompt or add context), Stop (may send the model
on), SessionStart (may add context). A matcher is a regular expression over the tool's name,
matched whole, against Claude Code's name for it (`Bash`, `Edit`, ...: TOOL_NAMES) or ours.

A hook is code the user chose: it runs unsandboxed in the workspace folder, like Claude Code's,
with the command environment less what is named like a credential (sandbox.command_env), off
the event loop (an asyncio subprocess in its own process group, killed whole on timeout), its
output capped. A hook that fails or times out is a notice, and a tool call it was asked about is
put to the user: never a silent allow.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal

from .context_messages import render
from .tools.sandbox import command_env

if TYPE_CHECKING:
    from .session import AgentSession
    from .turns import TurnOutcome

log = logging.getLogger(__name__)

Event = Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"]
Decision = Literal["allow", "deny", "ask"]

# Our tools under Claude Code's names, so its matchers (`Bash`, `Edit|Write`) and scripts (that
# read `tool_input.command` or `.file_path`) work unchanged. MCP tools share the `mcp__server__tool` form.
TOOL_NAMES = {
    "run_command": "Bash", "edit_file": "Edit", "apply_patch": "Edit", "write_file": "Write", "read_file": "Read",
    "grep": "Grep", "list_files": "Glob", "web_fetch": "WebFetch", "todo_write": "TodoWrite", "task": "Task",
    "skill": "Skill",
}
MAX_OUTPUT = 64 * 1024  # bytes kept of a hook's stdout and of its stderr; the rest is read and dropped
MAX_TEXT = 10_000  # characters of a reason or context a hook gives the model
MAX_HOOKS = 32  # commands run for one event
MAX_STOP_CONTINUES = 3  # a Stop hook that always blocks cannot keep a turn going for ever


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float


@dataclass
class HookRun:
    command: str
    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    failure: str | None = None  # could not start, timed out, exited with a code other than 0 and 2


@dataclass
class Outcome:
    """What the hooks of one event decided, all of them together."""

    decision: Decision | None = None  # PreToolUse; deny beats ask beats allow
    reason: str | None = None  # of the decision, or why a prompt or a stop is blocked
    blocked: bool = False  # UserPromptSubmit / Stop / PostToolUse: decision "block" or exit code 2
    context: list[str] = field(default_factory=list)  # for the model
    notices: list[str] = field(default_factory=list)  # for the user
    failed: bool = False  # a hook failed or timed out


def claude_name(tool_name: str) -> str:
    return TOOL_NAMES.get(tool_name, tool_name)


def commands_for(raw: Any, event: Event, tool_name: str | None, default_timeout: float,
                 problems: list[str]) -> list[HookCommand]:
    """The commands the `hooks` setting runs for `event` (and this tool); each malformed entry is
    named in `problems` and left out, the rest still run."""
    groups = raw.get(event) if isinstance(raw, dict) else None
    if groups is None:
        return []
    if not isinstance(groups, list):
        problems.append(f"hooks.{event} must be a list of {{matcher, hooks}} entries; ignored")
        return []
    out: list[HookCommand] = []
    for i, group in enumerate(groups):
        where = f"hooks.{event}[{i}]"
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            problems.append(f"{where} must be an object with a \"hooks\" list; ignored")
            continue
        matcher = group.get("matcher")
        if tool_name is not None and matcher not in (None, "", "*"):
            if not isinstance(matcher, str):
                problems.append(f"{where}.matcher must be a string; ignored")
                continue
            try:
                pattern = re.compile(matcher)
            except re.error as exc:
                problems.append(f"{where}.matcher {matcher!r} is not a regular expression ({exc}); ignored")
                continue
            if not (pattern.fullmatch(claude_name(tool_name)) or pattern.fullmatch(tool_name)):
                continue
        for j, hook in enumerate(group["hooks"]):
            if not isinstance(hook, dict) or hook.get("type", "command") != "command" or not isinstance(hook.get("command"), str):
                problems.append(f"{where}.hooks[{j}] must be {{\"type\": \"command\", \"command\": \"...\"}}; ignored")
                continue
            timeout = hook.get("timeout", default_timeout)
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
                problems.append(f"{where}.hooks[{j}].timeout must be a positive number of seconds; {default_timeout:g} used")
                timeout = default_timeout
            out.append(HookCommand(hook["command"], float(timeout)))
    if len(out) > MAX_HOOKS:
        problems.append(f"{len(out)} hooks for {event}: only the first {MAX_HOOKS} run")
    return out[:MAX_HOOKS]


async def _read_capped(stream: asyncio.StreamReader | None) -> bytes:
    """At most MAX_OUTPUT bytes of a stream read to its end (the rest drained, so the hook never
    blocks on a full pipe)."""
    if stream is None:
        return b""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < MAX_OUTPUT:
            kept += chunk[: MAX_OUTPUT - len(kept)]
    return bytes(kept)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    from .tools.shell import stop_process_group  # noqa: PLC0415 - shell imports the tool machinery

    await stop_process_group(proc.pid)


async def run_hook(hook: HookCommand, payload: dict[str, Any], cwd: Path, env: dict[str, str]) -> HookRun:
    """One hook: the event's JSON on stdin, its output read capped, killed (its whole process
    group) when it outlives its timeout."""
    run = HookRun(hook.command)
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", hook.command, cwd=cwd, env=env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        run.failure = f"could not start ({exc})"
        return run

    async def talk() -> tuple[bytes, bytes]:
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(payload, ensure_ascii=False).encode())
            await proc.stdin.drain()
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a hook that reads nothing is fine
        out, err = await asyncio.gather(_read_capped(proc.stdout), _read_capped(proc.stderr))
        await proc.wait()
        return out, err

    task = asyncio.ensure_future(talk())
    try:
        out, err = await asyncio.wait_for(asyncio.shield(task), hook.timeout)
    except TimeoutError:
        await _stop(proc)
        task.cancel()
        run.failure = f"timed out after {hook.timeout:g} s (the `timeout` of the hook, or the hookTimeout setting)"
        return run
    except asyncio.CancelledError:
        await asyncio.shield(_stop(proc))
        task.cancel()
        raise
    run.code = proc.returncode
    run.stdout = out.decode("utf-8", "replace")
    run.stderr = err.decode("utf-8", "replace")
    if run.code not in (0, 2):
        tail = run.stderr.strip().splitlines()[-1:] if run.stderr.strip() else []
        run.failure = f"exited with code {run.code}" + (f": {tail[0][:300]}" if tail else "")
    return run


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n[... cut at {MAX_TEXT} characters]"


def interpret(event: Event, runs: list[HookRun]) -> Outcome:
    """Claude Code's reading of the hooks' answers: exit code 2 blocks with stderr as the reason;
    exit 0 with a JSON object on stdout may decide (`hookSpecificOutput.permissionDecision`,
    `decision: "block"`, the older `decision: "approve"`), add `additionalContext`, stop
    (`continue: false`) or show a `systemMessage`; plain stdout of UserPromptSubmit and
    SessionStart is context for the model. Any other exit, or a timeout, is a failure."""
    out = Outcome()
    rank = {"allow": 0, "ask": 1, "deny": 2}
    decisions: list[tuple[Decision, str | None]] = []
    for run in runs:
        if run.failure is not None:
            out.failed = True
            out.notices.append(f"{event} hook `{_short(run.command)}` {run.failure}")
            continue
        if run.code == 2:
            stderr = _clip(run.stderr) or "blocked by a hook (exit code 2)"
            if event == "PreToolUse":
                decisions.append(("deny", stderr))
            else:
                out.blocked, out.reason = True, stderr
            continue
        data: Any = None
        text = run.stdout.strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError:
                data = None
        if not isinstance(data, dict):
            if text and event in ("UserPromptSubmit", "SessionStart"):
                out.context.append(_clip(text))
            continue
        if isinstance(data.get("systemMessage"), str):
            out.notices.append(f"{event} hook: {_clip(data['systemMessage'])}")
        found = data.get("hookSpecificOutput")
        specific: dict[str, Any] = found if isinstance(found, dict) else {}
        if isinstance(specific.get("additionalContext"), str) and specific["additionalContext"].strip():
            out.context.append(_clip(specific["additionalContext"]))
        given = data.get("reason")
        reason: str | None = given if isinstance(given, str) else None
        if event == "PreToolUse":
            decision = specific.get("permissionDecision")
            stated = specific.get("permissionDecisionReason")
            why = stated if isinstance(stated, str) else reason
            legacy = {"approve": "allow", "block": "deny"}.get(str(data.get("decision")))
            chosen = decision if decision in rank else legacy
            if chosen is not None:
                decisions.append((chosen, _clip(why) if why else None))  # type: ignore[arg-type]
        elif data.get("decision") == "block":
            out.blocked, out.reason = True, _clip(reason or "blocked by a hook")
        if data.get("continue") is False and event != "Stop":  # Stop: it stops anyway
            out.blocked = True
            stop = data.get("stopReason")
            out.reason = _clip(stop) if isinstance(stop, str) and stop else (out.reason or "a hook asked to stop")
    if decisions:
        out.decision, out.reason = max(decisions, key=lambda d: rank[d[0]])
    return out


def _short(command: str) -> str:
    one = " ".join(command.split())
    return one if len(one) <= 80 else one[:79] + "…"


# -- one event for a session -----------------------------------------------------------------------


PERMISSION_MODES = {"ask": "default", "auto-edit": "acceptEdits", "auto": "bypassPermissions"}


async def run_event(session: "AgentSession", event: Event, fields: dict[str, Any], tool_name: str | None = None) -> Outcome:
    """Run the session's hooks for `event` (in parallel, as Claude Code does) and read their answers."""
    settings = session.deps.settings()
    problems: list[str] = []
    hooks = commands_for(settings.hooks, event, tool_name, settings.hookTimeout, problems)
    if not hooks:
        out = Outcome()
        out.notices = [f"hooks setting: {p}" for p in problems]
        return out
    from .plan_mode import mode_of  # noqa: PLC0415 - plan_mode imports the session's tools

    payload = {
        "session_id": session.id,
        "transcript_path": "",
        "cwd": str(session.root),
        "permission_mode": "plan" if mode_of(session) == "plan" else PERMISSION_MODES.get(settings.approvals, "default"),
        "hook_event_name": event,
        **fields,
    }
    env = {**command_env(tuple(settings.sandboxEnv), sandboxed=False),
           "CLAUDE_PROJECT_DIR": str(session.root), "SHIRO_PROJECT_DIR": str(session.root)}
    runs = await asyncio.gather(*(run_hook(h, payload, session.root, env) for h in hooks))
    out = interpret(event, list(runs))
    out.notices = [f"hooks setting: {p}" for p in problems] + out.notices
    return out


def tool_input(root: Path, tool_name: str, arguments: Any) -> Any:
    """The call's arguments as a hook sees them: ours, plus Claude Code's `file_path` (absolute)
    beside our workspace-relative `path`, which its Edit/Write/Read scripts read."""
    if not isinstance(arguments, dict):
        return arguments
    out = dict(arguments)
    path = arguments.get("path")
    if isinstance(path, str) and "file_path" not in out:
        out["file_path"] = os.path.normpath(os.path.join(root, path))
    return out


def _tell(session: "AgentSession", turn_id: str, notices: list[str]) -> None:
    from ..protocol import NoticeEvent  # noqa: PLC0415 - kept out of the module's import for the tests' fakes

    for message in notices:
        session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=message))


async def before_tool(session: "AgentSession", turn_id: str, tool_name: str, tool_call_id: str, arguments: Any) -> Outcome:
    """PreToolUse: the hooks' decision about a call, their notices sent."""
    out = await run_event(session, "PreToolUse", {
        "tool_name": claude_name(tool_name), "tool_input": tool_input(session.root, tool_name, arguments),
        "tool_use_id": tool_call_id}, tool_name)
    _tell(session, turn_id, out.notices)
    return out


def asked_because(out: Outcome) -> str | None:
    """Why the hooks put this call to the user (an approval's title says it), or None."""
    if out.failed and out.decision != "deny":
        return "a PreToolUse hook failed, so you decide"
    if out.decision == "ask":
        return f"asked by a PreToolUse hook{': ' + out.reason if out.reason else ''}"
    return None


def denied_text(out: Outcome) -> str:
    return (f"denied by a PreToolUse hook: {out.reason or 'no reason given'}. The call was not run; "
            "do not retry it in another form. If it is needed, ask the user.")


async def after_tool(session: "AgentSession", turn_id: str, tool_name: str, tool_call_id: str, arguments: Any,
                     output: str, is_error: bool) -> str:
    """PostToolUse: what the hooks tell the model about the result (appended to it), or ""."""
    out = await run_event(session, "PostToolUse", {
        "tool_name": claude_name(tool_name), "tool_input": tool_input(session.root, tool_name, arguments),
        "tool_response": {"output": output[:MAX_OUTPUT], "is_error": is_error}, "tool_use_id": tool_call_id}, tool_name)
    _tell(session, turn_id, out.notices)
    said = ([f"PostToolUse hook: {out.reason}"] if out.blocked and out.reason else []) + out.context
    return "".join(f"\n\n{text}" for text in said)


# Sessions whose SessionStart hooks ran in this process (a resumed session runs them again, with
# `source: "resume"`, as Claude Code does); weak: a session released from memory leaves it.
_started: "weakref.WeakSet[AgentSession]" = weakref.WeakSet()


async def prompt_submitted(session: "AgentSession", prompt: str) -> tuple[str | None, list[str], list[str]]:
    """SessionStart (a session's first prompt in this process) and UserPromptSubmit: (why the
    prompt is blocked, or None; context blocks sent with the prompt; notices for the user)."""
    context: list[str] = []
    notices: list[str] = []
    if session not in _started:
        _started.add(session)
        start = await run_event(session, "SessionStart", {"source": "resume" if session.messages else "startup"})
        notices += start.notices
        context += [render("session_start_hook", text) for text in start.context]
    out = await run_event(session, "UserPromptSubmit", {"prompt": prompt})
    notices += out.notices
    if out.blocked:
        return out.reason or "blocked by a UserPromptSubmit hook", [], notices
    return None, context + [render("user_prompt_submit_hook", text) for text in out.context], notices


def blocked_turn(session: "AgentSession", turn_id: str, reason: str, notices: list[str]) -> "TurnOutcome":
    """A turn whose prompt a UserPromptSubmit hook blocked: it starts and ends at once with the
    reason as its error; the prompt never reaches the model nor the transcript (as in Claude Code)."""
    from ..protocol import TurnEndEvent, TurnStartEvent  # noqa: PLC0415
    from .turns import TurnOutcome  # noqa: PLC0415

    session.deps.sink.event(TurnStartEvent(sessionId=session.id, turnId=turn_id))
    _tell(session, turn_id, notices)
    error = f"the prompt was blocked by a UserPromptSubmit hook: {reason}"
    session.deps.sink.event(TurnEndEvent(sessionId=session.id, turnId=turn_id, status="error", text="", error=error))
    return TurnOutcome("error", text="", error=error)


async def until_stopped(session: "AgentSession", turn_id: str, outcome: "TurnOutcome",
                        go_on: Callable[[], Awaitable["TurnOutcome"]]) -> "TurnOutcome":
    """Stop hooks, when the turn completed: one that blocks (exit code 2, `decision: "block"`)
    sends its reason to the model and the turn goes on, at most MAX_STOP_CONTINUES times."""
    from ..model.transcript import TextPart, UserMessage  # noqa: PLC0415

    for round_ in range(MAX_STOP_CONTINUES + 1):
        if outcome.status != "completed":
            return outcome
        out = await run_event(session, "Stop", {"stop_hook_active": round_ > 0})
        _tell(session, turn_id, out.notices)
        if not out.blocked or not out.reason:
            return outcome
        if round_ == MAX_STOP_CONTINUES:
            _tell(session, turn_id, [f"a Stop hook asked to go on {MAX_STOP_CONTINUES} times; the turn ends here"])
            return outcome
        # A context message (not shown as a prompt by clients) carries the hook's reason.
        session.messages.append(UserMessage(content=[TextPart(text=render("stop_hook", out.reason))], context=True))
        session.changed()
        outcome = await go_on()
    return outcome
