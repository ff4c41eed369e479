"""Project memory and task list commands: shiro.todos, notes, memory, remember, recall, forget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from .. import protocol as wire
from ..features.todos import payload as todos_payload
from ..protocol import ForgetArgs, RecallArgs, RememberArgs, SessionArgs, WorkspaceArgs
from . import command

if TYPE_CHECKING:
    from ..lsp import ShiroServer


def register(server: "ShiroServer") -> None:
    service = server.service

    @command(server, wire.TODOS, SessionArgs)
    async def todos(ls: "ShiroServer", args: SessionArgs) -> dict[str, Any]:
        session = service.session_for(args.sessionId, args.workspace)
        return {k: v for k, v in todos_payload(session).items() if k != "sessionId"}

    @command(server, wire.NOTES, WorkspaceArgs)
    async def notes(ls: "ShiroServer", args: WorkspaceArgs) -> dict[str, Any]:
        entries = await service.memory.run(service.workspaces.pick(args.workspace), lambda m: m.entries())
        return {"entries": msgspec.to_builtins(entries)}

    @command(server, wire.REMEMBER, RememberArgs)
    async def remember(ls: "ShiroServer", args: RememberArgs) -> dict[str, Any]:
        entry = await service.memory.run(service.workspaces.pick(args.workspace), lambda m: m.remember(args.kind, args.text))
        return {"entry": msgspec.to_builtins(entry)}

    @command(server, wire.RECALL, RecallArgs)
    async def recall(ls: "ShiroServer", args: RecallArgs) -> dict[str, Any]:
        entries = await service.memory.run(service.workspaces.pick(args.workspace), lambda m: m.recall(args.query))
        return {"entries": msgspec.to_builtins(entries)}

    @command(server, wire.FORGET, ForgetArgs)
    async def forget(ls: "ShiroServer", args: ForgetArgs) -> dict[str, Any]:
        removed = await service.memory.run(service.workspaces.pick(args.workspace), lambda m: m.forget(args.text))
        return {"removed": removed}

    @command(server, wire.MEMORY, WorkspaceArgs)
    async def memory(ls: "ShiroServer", args: WorkspaceArgs) -> Any:
        return await service.memory.compact(service.workspaces.pick(args.workspace))
