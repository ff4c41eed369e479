"""The core tools, their schemas for the provider, and the one way to run a call.

`run_tool` never raises for anything the model did wrong: bad JSON, a missing or mistyped
argument, a refused path all become an error result the model reads and can fix. Only
cancellation (the user aborting the turn) propagates.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .base import Tool, ToolError, ToolHost, ToolResult
from .files import EDIT_FILE, READ_FILE, WRITE_FILE
from .search import GREP, LIST_FILES
from .sandbox import Sandbox
from .shell import RUN_COMMAND, run_command_tool


def core_tools(sandbox: Sandbox | None = None, *, env_names: tuple[str, ...] = (), unenforced: str | None = None) -> list[Tool]:
    plain = sandbox is None and not env_names and unenforced is None
    shell = RUN_COMMAND if plain else run_command_tool(sandbox, env_names=env_names, unenforced=unenforced)
    return [READ_FILE, LIST_FILES, GREP, EDIT_FILE, WRITE_FILE, shell]


def tool_schemas(tools: list[Tool]) -> list[dict[str, Any]]:
    """Provider-neutral function-tool declarations; each provider adapter wraps them its own way."""
    return [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]


_JSON_TYPES: dict[str, str] = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
}

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    # bool is an int in Python but not in JSON; 12.0 is how some models write 12.
    "integer": lambda v: not isinstance(v, bool) and (isinstance(v, int) or isinstance(v, float) and v.is_integer()),
    "number": lambda v: not isinstance(v, bool) and isinstance(v, (int, float)),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _shown(value: Any) -> str:
    return json.dumps(value, default=str)[:200]


def _check_type(name: str, value: Any, spec: dict[str, Any]) -> Any:
    """The value, normalised (12.0 -> 12 for integers), or ToolError naming what was expected."""
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _TYPE_CHECKS:
        return value  # union types (["string", "null"]) and untyped keys: the tool checks them
    if not _TYPE_CHECKS[kind](value):
        raise ToolError(f"argument '{name}' must be {_JSON_TYPES[kind]}, got {_shown(value)}")
    if kind == "integer":
        value = int(value)
    if "minimum" in spec and value < spec["minimum"]:
        raise ToolError(f"argument '{name}' must be at least {spec['minimum']}, got {value}")
    if "maximum" in spec and value > spec["maximum"]:
        raise ToolError(f"argument '{name}' must be at most {spec['maximum']}, got {value}")
    return value


def parse_arguments(tool: Tool, raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """The call's arguments checked against the tool's (flat) JSON schema."""
    if raw is None or isinstance(raw, str) and not raw.strip():
        args: Any = {}  # some models send "" for a call without arguments
    elif isinstance(raw, str):
        try:
            args = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolError(f"invalid JSON arguments: {exc}; send one JSON object") from None
    else:
        args = raw
    if not isinstance(args, dict):
        raise ToolError(f"arguments must be a JSON object, got {_shown(args)}")
    props: dict[str, Any] = tool.parameters.get("properties", {})
    required: list[str] = tool.parameters.get("required", [])
    # null for an optional argument means "not given" (strict-mode models send every key).
    args = {k: v for k, v in args.items() if v is not None or k in required}
    unknown = sorted(set(args) - set(props))
    if unknown and tool.parameters.get("additionalProperties") is False:
        raise ToolError(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)} "
            f"for {tool.name}; it takes {', '.join(repr(k) for k in props) or 'no arguments'}"
        )
    missing = [k for k in required if k not in args]
    if missing:
        raise ToolError(
            f"missing required argument{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(k) for k in missing)} for {tool.name}"
        )
    return {k: _check_type(k, v, props[k]) if k in props else v for k, v in args.items()}


async def run_tool(tool: Tool, host: ToolHost, args: str | dict[str, Any] | None) -> ToolResult:
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
