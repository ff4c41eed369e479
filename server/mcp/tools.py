"""Ready MCP servers' tools as `Tool`s of our registry: named for the model, approved like
commands (a third-party tool can do anything), run through the server's connection."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..agent.tools.base import Tool, ToolHost, ToolResult
from .names import assign_names

if TYPE_CHECKING:
    from .connection import McpConnection, McpTool


def arguments_problem(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """Why `args` do not fit the server's own input schema (checked with jsonschema, as
    connection.py checks the schema itself), or None. The model reads it and can fix its call
    without a round trip to a server that may answer less clearly."""
    import jsonschema  # noqa: PLC0415 - loaded with the connection already; only when MCP is in use

    error = jsonschema.exceptions.best_match(jsonschema.validators.validator_for(schema)(schema).iter_errors(args))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"argument {where!r}: {error.message}" if where else f"arguments: {error.message}"


def _as_tool(conn: "McpConnection", tool: "McpTool", name: str) -> Tool:
    async def run(host: ToolHost, args: dict[str, Any]) -> ToolResult:
        problem = arguments_problem(tool.input_schema, args)
        if problem is not None:
            return ToolResult(f"{problem} (MCP tool {name}); no call was made", is_error=True)
        output, is_error = await conn.call(tool.name, args)
        return ToolResult(output, is_error)

    def summary(args: dict[str, Any]) -> str:
        # Every argument in full: the clients wrap it; a cut hid what came after (issue 35).
        shown = json.dumps(args, ensure_ascii=False)
        return f"call the MCP tool {tool.name!r} of server {conn.name!r} with {shown}"

    description = f"[MCP server {conn.name}] {tool.description}".strip()
    return Tool(
        name=name,
        description=description,
        parameters=tool.input_schema,
        run=run,
        # Under `ask` and `auto-edit` an MCP call asks first, unless the server's alwaysAllow lists it.
        approval=None if tool.name in conn.spec.alwaysAllow else "command",
        summary=summary,
        read_only=tool.read_only,
    )


def mcp_tools(connections: list["McpConnection"]) -> list[Tool]:
    pairs = [(c, t) for c in sorted(connections, key=lambda c: c.name) for t in c.tools]
    names = assign_names([(c.name, t.name) for c, t in pairs])
    return [_as_tool(c, t, names[(c.name, t.name)]) for c, t in pairs]


def model_names(connections: list["McpConnection"]) -> dict[tuple[str, str], str]:
    """(server, tool) -> the name the model sees, for `shiro.mcp`."""
    return assign_names([(c.name, t.name) for c in sorted(connections, key=lambda c: c.name) for t in c.tools])
