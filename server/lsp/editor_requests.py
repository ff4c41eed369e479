"""`shiro/diagnostics` and `shiro/navigate`: the server asks the editor (docs/protocol.md "Editor
context and intelligence").

A client declares at `initialize` what it answers: `capabilities.experimental.shiro.editor:
{diagnostics?: bool, navigation?: bool}`. Each request is bounded by a timeout; on timeout or
turn abort the server sends `$/cancelRequest` and forgets the request (pygls would otherwise keep
its future forever, as lsp/client_approval.py explains). What comes back is capped before the
agent sees it: an editor with a huge workspace must not flood a tool result or the memory.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, TypeVar

import msgspec
from lsprotocol import types

from .. import protocol as wire
from ..agent.tools.editor_tools import EditorUnavailable
from .pygls_overrides import forget_request

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 5.0
MAX_FILES = 500  # files of one diagnostics answer kept at most
MAX_PER_FILE = 200  # diagnostics of one file kept at most
MAX_LOCATIONS = 500

R = TypeVar("R", bound=msgspec.Struct)


def editor_capabilities(experimental: Any) -> dict[str, bool]:
    """`experimental.shiro.editor` as the client declared it ({} when it declared nothing)."""
    raw = wire.plain(experimental)
    shiro = raw.get("shiro") if isinstance(raw, dict) else None
    editor = shiro.get("editor") if isinstance(shiro, dict) else None
    if not isinstance(editor, dict):
        return {}
    return {key: editor.get(key) is True for key in ("diagnostics", "navigation")}


class LspEditor:
    """The `Editor` of agent/tools/editor_tools.py for an LSP client."""

    def __init__(self, server: Any) -> None:
        self.server = server

    def _declared(self, key: str) -> bool:
        try:
            experimental = self.server.client_capabilities.experimental
        except (AttributeError, RuntimeError):  # before initialize
            return False
        return editor_capabilities(experimental).get(key, False)

    @property
    def offers_diagnostics(self) -> bool:
        return self._declared("diagnostics")

    @property
    def offers_navigation(self) -> bool:
        return self._declared("navigation")

    async def _request(self, method: str, params: msgspec.Struct, result: type[R]) -> R:
        protocol = self.server.protocol
        msg_id = f"{method.split('/')[-1]}-{uuid.uuid4()}"
        try:
            answer = await asyncio.wait_for(
                protocol.send_request_async(method, wire.to_wire(params), msg_id=msg_id), TIMEOUT_SECONDS)
        except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
            forget_request(protocol, msg_id)
            try:
                protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            except Exception:  # the pipe may be gone (server stopping)
                log.debug("could not cancel %s", msg_id, exc_info=True)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise EditorUnavailable(f"no answer to {method} within {TIMEOUT_SECONDS:g} s") from None
        except Exception as exc:  # the client answered with an error
            raise EditorUnavailable(f"{method} failed: {exc}") from None
        try:
            return msgspec.convert(wire.plain(answer) or {}, result)
        except (msgspec.ValidationError, TypeError) as exc:
            raise EditorUnavailable(f"{method} answered something malformed: {exc}") from None

    async def diagnostics(self, uris: list[str] | None) -> list[wire.FileDiagnostics]:
        if not self.offers_diagnostics:
            raise EditorUnavailable(f"the editor does not answer {wire.DIAGNOSTICS}")
        answer = await self._request(wire.DIAGNOSTICS, wire.DiagnosticsParams(uris=uris), wire.DiagnosticsResult)
        # Not filtered by `uris`: an editor may spell a URI its own way (VS Code escapes ':').
        return [wire.FileDiagnostics(uri=item.uri, diagnostics=item.diagnostics[:MAX_PER_FILE], generation=item.generation)
                for item in answer.items[:MAX_FILES]]

    async def navigate(self, params: wire.NavigateParams) -> wire.NavigateResult:
        if not self.offers_navigation:
            raise EditorUnavailable(f"the editor does not answer {wire.NAVIGATE}")
        answer = await self._request(wire.NAVIGATE, params, wire.NavigateResult)
        return wire.NavigateResult(
            locations=answer.locations[:MAX_LOCATIONS] if answer.locations is not None else None,
            symbols=answer.symbols[:MAX_LOCATIONS] if answer.symbols is not None else None,
            hover=answer.hover[:20_000] if answer.hover is not None else None,
        )
