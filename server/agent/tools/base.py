"""What a tool is and what it may ask of its surroundings.

Tools never talk to the editor directly: the `ToolHost` is the seam. The LSP layer implements it
with open buffers, `workspace/applyEdit` and approval dialogs; unit tests implement it with plain
files and scripted answers.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Generic, Literal, Protocol, TypeVar

import msgspec

from ..images import RawImage

# "sandboxed-command": a command that runs inside an operating-system sandbox (see sandbox.py).
# "unsandboxed-command": the settings ask for a sandbox that cannot be enforced here; always asked.
ApprovalKind = Literal["edit", "command", "sandboxed-command", "unsandboxed-command"]


class ToolError(Exception):
    """A refusal or failure the model should read (becomes a tool result with isError)."""


class ToolHost(Protocol):
    root: Path

    def open_document_text(self, path: Path) -> str | None:
        """The editor buffer's text when the file is open there (unsaved edits included), else None."""

    async def editor_text(self, path: Path) -> str | None:
        """The same for the file tools, where the editor may have to be asked (ACP's fs/read_text_file)."""

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        """Replace the whole file's text (through the editor when it can, else on disk, atomically).

        Returns False when the user rejected the edit."""


@dataclass
class ToolResult:
    output: str
    is_error: bool = False
    # A line every client shows beside the result (a `notice` event): what the call changed that
    # outlives the session, e.g. a `remember` (issue 20: nothing the model writes there is silent).
    notice: str | None = None
    # read_file of an image: sent to the model after the step's results (agent/images.py).
    image: "RawImage | None" = None


# (turn id, tool call id) of the call whose `run` is running (set by agent/tool_calls.py): the
# `task` tool's subagent tags its events with it (tools/task.py).
running_call: ContextVar[tuple[str, str] | None] = ContextVar("running_call", default=None)

# What `run` receives: a core tool's arguments Struct, or an MCP tool's plain JSON object.
A = TypeVar("A")


@dataclass
class Tool(Generic[A]):
    name: str
    description: str
    # Gets the call's arguments already checked (tools/registry.py `run_tool`): a core tool its
    # `arguments` Struct, so it never checks a type or a bound again; an MCP tool a dict.
    run: Callable[["ToolHost", A], Awaitable[ToolResult]]
    # A core tool's arguments, defined once (tools/arguments.py): `parameters` is derived from it
    # and every call is decoded into it before `run` sees the arguments. None: an MCP tool, whose
    # schema is its server's (mcp/tools.py checks those).
    arguments: type[A] | None = None
    # JSON schema of the arguments object: from `arguments`, or an MCP server's own schema.
    parameters: dict[str, Any] = field(default_factory=dict)
    # Which approval this call needs under the `approvals` setting, or None when never.
    approval: ApprovalKind | None = None
    # The approval's one line, from the arguments as the model sent them (not yet checked).
    summary: Callable[[dict[str, Any]], str] = field(default=lambda args: "")
    # For edits: the file and its whole text as the call would leave it (shown with the approval;
    # from the unchecked arguments too, so it must expect anything).
    preview: Callable[["ToolHost", dict[str, Any]], Awaitable[tuple[Path, str] | None]] | None = None
    # For an edit of several files (apply_patch): each file and its text after the call (None:
    # deleted), so the approval's diff shows them all; `preview` is the first of them.
    changes: Callable[["ToolHost", dict[str, Any]], Awaitable[list[tuple[Path, str | None]]]] | None = None
    # The result of a denied call when the default one would not say enough (it must say "denied").
    denied: str | None = None
    # Why this call is asked whatever the `approvals` mode, or None (from the unchecked arguments):
    # run_command widening its sandbox, web_fetch to a host the user did not allow. A yes to such
    # a call holds for it alone ("always allow" does not cover the next one; agent/tool_calls.py).
    always_ask: Callable[[dict[str, Any]], str | None] | None = None
    # True when this call needs no approval at all whatever the mode (web_fetch to a host in the
    # user's `webFetchAllowedDomains`).
    unasked: Callable[[dict[str, Any]], bool] | None = None
    # True when a call changes no workspace file (reads, searches, the task list, memory, an MCP
    # tool its server marks readOnlyHint, run_command as plan mode builds it): plan mode offers and
    # runs only these (agent/plan_mode.py). A new tool is left out of plan mode until it says so.
    read_only: bool = False

    def __post_init__(self) -> None:
        if self.arguments is not None:
            from .arguments import json_schema  # noqa: PLC0415 - arguments imports ToolError from here

            assert issubclass(self.arguments, msgspec.Struct), self.name
            self.parameters = json_schema(self.arguments)
