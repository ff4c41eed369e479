"""The task list: shiro.todos."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import SessionArgs, TodosResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.TODOS, SessionArgs)
    async def todos(ls: "ShiroServer", args: SessionArgs) -> TodosResult:
        return ls.service.todos.result(ls.service.session_for(args.sessionId, args.workspace))
