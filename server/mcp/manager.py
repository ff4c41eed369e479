"""The MCP feature's one entry point: every workspace's servers, their tools and their state.

The service calls `activate` when a workspace's first session starts (servers start in the
background: `initialize` never waits), `prepare_turn` before each turn, `tools` per provider
step, `configure` on every settings change and `stop` on shutdown. A front end that receives
servers from its client (ACP's `session/new`) passes them to `use_client_servers`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..agent.tools.base import Tool
from ..state.paths import workspace_key
from ..state.trust import TrustStore
from .specs import McpServerSpec
from .tools import mcp_tools, model_names
from .workspace_servers import AskUser, ServerView, WorkspaceServers

if TYPE_CHECKING:
    from ..protocol import McpResult

# How long a turn waits for a server still starting before it goes on without its tools.
TURN_WAIT_SECONDS = 5.0


def turn_wait() -> float:
    try:
        return float(os.environ.get("SHIRO_MCP_TURN_WAIT", TURN_WAIT_SECONDS))
    except ValueError:
        return TURN_WAIT_SECONDS


class McpManager:
    def __init__(self, home: Callable[[], Path], ask: AskUser) -> None:
        self._home = home
        self._ask = ask
        self._settings_raw: Any = {}
        self._editor_servers: dict[str, Any] = {}
        self._workspaces: dict[Path, WorkspaceServers] = {}
        self._tools: dict[Path, list[Tool]] = {}

    def _forget_tools(self, root: Path) -> None:
        self._tools.pop(root, None)

    def _servers(self, root: Path) -> WorkspaceServers:
        servers = self._workspaces.get(root)
        if servers is None:
            servers = WorkspaceServers(
                root, workspace_key(root), TrustStore(self._home()), self._ask, lambda: self._forget_tools(root)
            )
            servers.configure(self._settings_raw)
            servers.editor_servers = self._editor_servers
            self._workspaces[root] = servers
            servers.reconcile()
        return servers

    def activate(self, root: Path) -> None:
        """A workspace's first session: start its servers in the background (idempotent)."""
        self._servers(root)

    def configure(self, mcp_servers: Any, workspace_servers: dict[str, Any] | None = None) -> None:
        """The `mcpServers` setting changed (or the editor's workspace-level servers, which are
        project servers): apply it to every running workspace at once."""
        self._settings_raw = mcp_servers
        self._editor_servers = dict(workspace_servers or {})
        for servers in self._workspaces.values():
            servers.configure(mcp_servers)
            servers.editor_servers = self._editor_servers
            servers.reconcile()

    def use_client_servers(self, root: Path, specs: list[McpServerSpec]) -> None:
        """Servers a client gave for this workspace (ACP `session/new` `mcpServers`): they run
        beside the settings' servers, replacing those of the same name."""
        servers = self._servers(root)
        servers.client_specs = list(specs)
        servers.reconcile()

    async def prepare_turn(self, root: Path) -> list[str]:
        return await self._servers(root).prepare_turn(turn_wait())

    def tools(self, root: Path) -> list[Tool]:
        servers = self._workspaces.get(root)
        if servers is None:
            return []
        cached = self._tools.get(root)
        if cached is None:
            cached = self._tools[root] = mcp_tools(servers.ready())
        return cached

    def views(self, root: Path) -> list[ServerView]:
        return self._servers(root).views()

    def model_names(self, root: Path) -> dict[tuple[str, str], str]:
        """(server, tool) -> the name the model sees."""
        return model_names(self._servers(root).ready())

    async def stop(self) -> None:
        """Shutdown: every MCP process of every workspace ends before this returns."""
        workspaces, self._workspaces = list(self._workspaces.values()), {}
        self._tools.clear()
        await asyncio.gather(*(w.stop() for w in workspaces), return_exceptions=True)


def status_of(manager: McpManager, root: Path) -> "McpResult":
    """`shiro.mcp`'s answer for one workspace."""
    from ..protocol import McpResult, McpServerInfo, McpToolInfo

    names = manager.model_names(root)
    return McpResult(
        servers=[
            McpServerInfo(
                name=view.name,
                source=view.source,
                state=view.state,
                error=view.error,
                tools=[McpToolInfo(name, description, names.get((view.name, name))) for name, description in view.tools],
            )
            for view in manager.views(root)
        ]
    )
