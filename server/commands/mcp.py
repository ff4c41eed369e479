"""shiro.mcp: the workspace's MCP servers, their state and their tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import McpResult, WorkspaceArgs
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.MCP, WorkspaceArgs)
    async def mcp(ls: "ShiroServer", args: WorkspaceArgs) -> McpResult:
        return ls.service.mcp_status(ls.service.workspaces.pick(args.workspace).root)
