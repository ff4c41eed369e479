"""ACP end to end: `shiro acp` (the installed console script) driven by the official Python
client of `agent-client-protocol`, against the real HTTP fake provider and real files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

import pytest_asyncio
from acp import schema, spawn_agent_process

from tests.fake_provider import FakeProvider
from tests.support.lsp import EDIT_FILE_MODEL, server_env

SHIRO = Path(sys.executable).parent / "shiro"  # the console script of this environment


@dataclass
class EditorClient:
    """An ACP editor: records every update, answers permissions from a script, holds buffers."""

    answers: list[str | None] = field(default_factory=list)  # option ids; None = dismissed
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[schema.RequestPermissionRequest] = field(default_factory=list)
    buffers: dict[str, str] = field(default_factory=dict)  # path -> unsaved editor text
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    hold_permission: asyncio.Event | None = None

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.permissions.append(schema.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options))
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        answer = self.answers.pop(0) if self.answers else "allow"
        if answer is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any) -> Any:
        self.reads.append(path)
        text = self.buffers[path] if path in self.buffers else Path(path).read_text()
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.writes.append((path, content))
        self.buffers[path] = content  # the editor's buffer; it saves when the user does
        return schema.WriteTextFileResponse()

    def of_kind(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates if u.session_update == kind and (session_id is None or s == session_id)]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind))


@dataclass
class Acp:
    conn: Any
    client: EditorClient
    process: Any
    fake: FakeProvider
    home: Path
    root: Path

    async def new_session(self) -> str:
        return (await self.conn.new_session(cwd=str(self.root), mcp_servers=[])).session_id

    async def prompt(self, session_id: str, text: str) -> Any:
        return await asyncio.wait_for(
            self.conn.prompt(session_id=session_id, prompt=[schema.TextContentBlock(type="text", text=text)]), 30
        )

    async def requests(self, n: int, timeout: float = 10.0) -> list[Any]:
        return await asyncio.to_thread(self.fake.wait_for_requests, n, timeout)


@contextlib.asynccontextmanager
async def run_acp(home: Path, root: Path, fake: FakeProvider, client: EditorClient | None = None,
                  fs: bool = False, args: tuple[str, ...] = (), **env: str) -> AsyncIterator[Acp]:
    client = client or EditorClient()
    env.setdefault("SHIRO_NEKO_CONFIG", str(home.parent / "no-user-settings.json"))  # never the real user's file
    env.setdefault("SHIRO_MODEL", EDIT_FILE_MODEL)  # the scripted replies call edit_file
    environment = server_env(home, fake.base_url, **env)
    # A generous exit allowance: the machine running the tests may be loaded (the SDK's default is 2 s).
    async with spawn_agent_process(client, str(SHIRO), "acp", *args, env=environment, cwd=str(root),
                                   transport_kwargs={"shutdown_timeout": 20.0}) as (conn, process):
        caps = schema.ClientCapabilities(fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
        init = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=caps), 30)
        acp = Acp(conn, client, process, fake, home, root)
        acp.init = init  # type: ignore[attr-defined]
        yield acp


@pytest_asyncio.fixture
async def acp(tmp_path: Path, fake: FakeProvider, workspace: Path) -> AsyncIterator[Acp]:
    async with run_acp(tmp_path / "home", workspace, fake) as running:
        yield running


def records(home: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((home / "sessions").glob("*.json"))]


def settings_file(tmp_path: Path, settings: dict[str, Any]) -> str:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    return str(path)


__all__ = ["Acp", "EditorClient", "SHIRO", "records", "run_acp", "settings_file", "os"]
