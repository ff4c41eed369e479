"""Plan mode: the model investigates and ends with a plan; nothing it calls changes a file.

Two guards, each enough on its own (docs/modes.md says why together they cannot write):

1. Offered: a request in plan mode carries only the tools marked `read_only` (tools/base.py): the
   reading and searching tools, the task list, memory, web_fetch, MCP tools whose server marks them
   `readOnlyHint`, and a run_command built for plan mode (`plan_command`: the read-only sandbox,
   or, where bubblewrap cannot run, every command asked with no "always allow").
2. Run: a call in plan mode is looked up among those same tools when it runs (agent/tool_calls.py),
   so a tool the model was not offered (it may call any name) is refused with a result that says
   plan mode is on and what to do instead; a call approved before a switch to plan is checked again
   after the answer.

The instructions stay byte-identical (agent/prompt.py is built from the full tool list whatever the
mode); the switch reaches the model as a context message section (agent/context_messages.py), and
the tool list changes once per switch.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import msgspec

from ..protocol import Mode
from .tools.base import Tool, ToolError, ToolHost, ToolResult
from .tools.background import BackgroundCommands
from .tools.sandbox import Sandbox
from .tools.shell import RunCommandArgs, run_command_tool

if TYPE_CHECKING:
    from .session import AgentSession

# The context message section that tells the model the mode (agent/context_messages.py).
SECTION = "collaboration_mode"

PLAN_TEXT = (
    "Plan mode is on: the user wants a plan before any change. Read, search, run commands that only "
    "look (they run in a read-only sandbox, or only after the user's yes), and ask what the code cannot "
    "tell you. Do not change anything: the tools that edit or write files are not available in plan mode "
    "and are refused if called. End your turn with the plan: write it as the task list with todo_write "
    "(one task per step, all pending), then a short summary: the approach, the files you would change and "
    "why, and how you would verify the change. Stopping at the plan is the task in this mode; the user "
    "reviews it and presses Start to switch to act mode and carry it out."
)
ACT_TEXT = (
    "Plan mode is off (act mode): the tools that change files are offered again and the user's "
    "approval settings apply. When the user asks you to carry out the plan, work through the task list."
)


def mode_of(session: "AgentSession") -> Mode:
    return "plan" if session.state.mode == "plan" else "act"


def set_mode(session: "AgentSession", mode: Mode) -> bool:
    """Switch the session's mode (saved in its record); True when it changed."""
    if mode == mode_of(session):
        return False
    session.state.mode = mode
    session.changed()
    return True


def section(session: "AgentSession") -> tuple[str, str]:
    """The mode's context section: nothing for a session never switched (its requests keep their
    bytes), the plan text in plan mode, the act text after a switch back."""
    if session.state.mode is msgspec.UNSET:
        return (SECTION, "")
    return (SECTION, PLAN_TEXT if mode_of(session) == "plan" else ACT_TEXT)


def offered(session: "AgentSession", tools: list[Tool]) -> list[Tool]:
    """The tools a request offers and a call may run: all of them in act mode, the read-only ones
    in plan mode."""
    if mode_of(session) == "act":
        return tools
    return [t for t in tools if t.read_only]


def refused(session: "AgentSession", tool: Tool | None, name: str, args: object) -> str | None:
    """Why plan mode does not run this call (checked before any question), or None: a tool that
    is not read-only (or not there at all), and a command asking to write past its sandbox."""
    if mode_of(session) == "act":
        return None
    if tool is None or not tool.read_only:
        return refusal(name)
    if name == "run_command" and isinstance(args, dict) and args.get("write_paths"):
        return PLAN_WRITE_PATHS
    return None


def refusal(tool_name: str) -> str:
    """The result of a call plan mode does not run: what is on, and how to go on."""
    return (
        f"refused: plan mode is on, and {tool_name} is not available in plan mode (it could change files "
        "or cannot be checked not to); the call was not run. Do not try another way to make the change. "
        "Finish the plan instead: the task list (todo_write) and a summary of what you would change; "
        "the user switches to act mode (Start) to carry it out."
    )


PLAN_WRITE_PATHS = (
    "refused: plan mode is on, so no command may write outside its read-only sandbox (write_paths); "
    "the command was not run. Note the step in the plan instead, for after the user presses Start."
)
UNCONFINED = "plan mode is on but no read-only sandbox can run here, so this command could change files"


def plan_command(sandbox: Sandbox | None, env_names: tuple[str, ...], background: BackgroundCommands | None,
                 why_unsandboxed: str | None) -> Tool:
    """run_command for plan mode. With bubblewrap: inside `sandbox` (read-only mode), write_paths
    refused. Without: every call asked (under any `approvals`), its yes for that call alone
    (`always_ask`: "always allow" and allow rules do not cover it)."""
    assert sandbox is None or sandbox.mode == "read-only", sandbox
    inner = run_command_tool(sandbox, env_names=env_names, background=background,
                             unenforced=None if sandbox is not None else (why_unsandboxed or "bubblewrap does not work here"))

    async def run(host: ToolHost, args: RunCommandArgs) -> ToolResult:
        if args.write_paths:
            raise ToolError(PLAN_WRITE_PATHS)
        return await inner.run(host, args)

    def always_ask(args: dict[str, Any]) -> str | None:
        if sandbox is None:
            return UNCONFINED
        return inner.always_ask(args) if inner.always_ask is not None else None

    note = (" Plan mode: the command runs in a read-only sandbox (it cannot change the workspace)." if sandbox is not None
            else " Plan mode: every command needs the user's yes (no read-only sandbox here); run only commands that look.")
    return dataclasses.replace(inner, run=run, always_ask=always_ask, read_only=True,
                               description=inner.description + note)
