"""Project memory: shiro.notes, remember, recall, forget, and shiro.memory (its compaction)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import (
    ForgetArgs,
    ForgetResult,
    MemoryCompactionResult,
    NotesResult,
    RecallArgs,
    RememberArgs,
    RememberResult,
    WorkspaceArgs,
)
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    service = server.service
    memory = service.memory

    @command(server, wire.NOTES, WorkspaceArgs)
    async def notes(ls: "ShiroServer", args: WorkspaceArgs) -> NotesResult:
        return NotesResult(entries=await memory.run(service.workspaces.pick(args.workspace), lambda m: m.entries()))

    @command(server, wire.REMEMBER, RememberArgs)
    async def remember(ls: "ShiroServer", args: RememberArgs) -> RememberResult:
        entry = await memory.run(service.workspaces.pick(args.workspace), lambda m: m.remember(args.kind, args.text))
        return RememberResult(entry=entry)

    @command(server, wire.RECALL, RecallArgs)
    async def recall(ls: "ShiroServer", args: RecallArgs) -> NotesResult:
        return NotesResult(entries=await memory.run(service.workspaces.pick(args.workspace), lambda m: m.recall(args.query)))

    @command(server, wire.FORGET, ForgetArgs)
    async def forget(ls: "ShiroServer", args: ForgetArgs) -> ForgetResult:
        return ForgetResult(removed=await memory.run(service.workspaces.pick(args.workspace), lambda m: m.forget(args.text)))

    @command(server, wire.MEMORY, WorkspaceArgs)
    async def compact_memory(ls: "ShiroServer", args: WorkspaceArgs) -> MemoryCompactionResult:
        return await memory.compact(service.workspaces.pick(args.workspace))
