"""The core tools and the one way to run a call: its arguments decoded once, into what `run` takes.

`run_tool` never raises for anything the model did wrong: bad JSON, a missing or mistyped
argument, a refused path all become an error result the model reads and can fix. Only
cancellation (the user aborting the turn) propagates.
"""

from __future__ import annotations

from typing import Any

from .apply_patch import APPLY_PATCH
from .arguments import check_arguments, decode_object
from .background import BackgroundCommands
from .base import Tool, ToolError, ToolHost, ToolResult
from .files import EDIT_FILE, READ_FILE, WRITE_FILE
from .search import GREP, LIST_FILES
from .sandbox import Sandbox
from .shell import RUN_COMMAND, run_command_tool


def core_tools(sandbox: Sandbox | None = None, *, env_names: tuple[str, ...] = (), unenforced: str | None = None,
               background: BackgroundCommands | None = None, patch: bool = False) -> list[Tool]:
    """patch: apply_patch instead of edit_file, for the model families trained on it (model_family.py)."""
    plain = sandbox is None and not env_names and unenforced is None and background is None
    shell = RUN_COMMAND if plain else run_command_tool(sandbox, env_names=env_names, unenforced=unenforced,
                                                       background=background)
    return [READ_FILE, LIST_FILES, GREP, APPLY_PATCH if patch else EDIT_FILE, WRITE_FILE, shell]


def parse_arguments(tool: Tool[Any], raw: str | dict[str, Any] | None) -> Any:
    """What the tool's `run` receives: a core tool's `arguments` Struct, decoded and checked once
    here (tools/arguments.py); an MCP tool has none and gets the JSON object (mcp/tools.py checks
    it against its server's own schema)."""
    args = decode_object(raw)
    if tool.arguments is None:
        # null for an optional argument means "not given" (strict-mode models send every key).
        required = tool.parameters.get("required", [])
        return {k: v for k, v in args.items() if v is not None or k in required}
    return check_arguments(tool.arguments, args, tool.name)


async def run_tool(tool: Tool[Any], host: ToolHost, args: str | dict[str, Any] | None) -> ToolResult:
    """Run one call; every failure except cancellation becomes an isError result."""
    try:
        return await tool.run(host, parse_arguments(tool, args))
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    except OSError as exc:
        # Permission denied, disk full, ...: the model can often route around these.
        return ToolResult(f"{tool.name} failed: {exc}", is_error=True)
    except Exception as exc:  # a bug in a tool must not leave the call without an output
        return ToolResult(f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)
