"""Permission rules: shiro.permissions (list) and shiro.removePermission (features/permission_rules.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import PermissionsArgs, PermissionsResult, RemovePermissionArgs, RemovePermissionResult
from ..state.paths import workspace_key
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.PERMISSIONS, PermissionsArgs)
    async def permissions(ls: "ShiroServer", args: PermissionsArgs) -> PermissionsResult:
        service = ls.service
        session = service.session_for(args.sessionId, args.workspace)
        sent = service.settings_for(session.id).permissions
        return service.permission_rules.listing(sent, session, workspace_key(session.root))

    @command(server, wire.REMOVE_PERMISSION, RemovePermissionArgs)
    async def remove_permission(ls: "ShiroServer", args: RemovePermissionArgs) -> RemovePermissionResult:
        service = ls.service
        session = service.session_for(args.sessionId, args.workspace)
        sent = service.settings_for(session.id).permissions
        removed = service.permission_rules.remove(
            sent, session, workspace_key(session.root), args.rule.strip(), args.scope, args.decision)
        return RemovePermissionResult(removed=removed)
