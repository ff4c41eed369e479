"""Model, effort, endpoint and key: shiro.models, shiro.setModel, shiro.setCredentials."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import ModelsArgs, ModelsResult, SetCredentialsArgs, SetCredentialsResult, SetModelArgs, SetModelResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.MODELS, ModelsArgs)
    async def models(ls: "ShiroServer", args: ModelsArgs) -> ModelsResult:
        service = ls.service
        workspace = service.workspaces.pick(args.workspace)
        settings = service.settings_for(workspace.current.id) if workspace.current is not None else service.settings
        return await service.model_choice.list(settings, args.refresh)

    @command(server, wire.SET_MODEL, SetModelArgs)
    async def set_model(ls: "ShiroServer", args: SetModelArgs) -> SetModelResult:
        service = ls.service
        return service.set_model(service.session_for(args.sessionId, args.workspace), args.model, args.effort)

    @command(server, wire.SET_CREDENTIALS, SetCredentialsArgs)
    async def set_credentials(ls: "ShiroServer", args: SetCredentialsArgs) -> SetCredentialsResult:
        return ls.service.model_choice.set_credentials(args)
