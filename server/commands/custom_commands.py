"""shiro.commands: the slash commands a client's menu offers (built-in, skills, custom commands)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import CommandsResult, WorkspaceArgs
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.SLASH_COMMANDS, WorkspaceArgs)
    async def commands(ls: "ShiroServer", args: WorkspaceArgs) -> CommandsResult:
        return await ls.service.skills.commands(ls.service.workspaces.pick(args.workspace).root)
