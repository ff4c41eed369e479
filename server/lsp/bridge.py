"""The editor side of the agent's seams: notifications, approval dialogs, buffers and edits."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from lsprotocol import types
from pygls.uris import to_fs_path

from .. import protocol as wire
from ..delta_coalescing import DeltaCoalescer
from ..agent.events import Approval, ApprovalRequest
from ..agent.tools.disk_host import DiskToolHost
from .client_approval import ask_in_client, ask_trust_in_client, offers_client_approvals
from .editor_requests import LspEditor

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class LspSink:
    """Turns loop events into `shiro/*` notifications and approvals into dialogs."""

    def __init__(self, server: "LanguageServer") -> None:
        self.server = server
        # Streamed text goes out at once, and is joined only while the client is behind.
        self.deltas = DeltaCoalescer(self._send_event)

    def use_writer(self, writer: Any) -> None:
        """The output writer (lsp/pipe_writer.py) tells when a write is pending and when it drained."""
        self.deltas.busy = lambda: bool(writer.pending)
        writer.on_drained = self.deltas.drained
        self.server.protocol.before_send = self.deltas.flush  # type: ignore[attr-defined]

    def _send_event(self, event: wire.Event) -> None:
        self._notify(wire.EVENT, event)

    def _notify(self, method: str, payload: msgspec.Struct) -> None:
        try:
            self.server.protocol.notify_struct(method, payload)  # type: ignore[attr-defined]
        except Exception:  # a closed pipe must not break the turn; state is still saved
            log.debug("could not send %s", method, exc_info=True)

    def event(self, event: wire.Event) -> None:
        self.deltas.event(event)

    def todos(self, payload: wire.TodosNotification) -> None:
        self._notify(wire.TODOS_NOTIFICATION, payload)

    def status(self, payload: wire.StatusPayload) -> None:
        self._notify(wire.STATUS_NOTIFICATION, payload)

    def focus_chat(self, payload: wire.FocusChatParams) -> None:
        self._notify(wire.FOCUS_CHAT, payload)

    def tool_running(self, session_id: str, turn_id: str, tool_call_id: str) -> None:
        pass  # LSP clients see the call from its `tool_call` event to its `tool_result`

    async def approve(self, request: ApprovalRequest) -> Approval:
        if offers_client_approvals(self.server.client_capabilities.experimental):
            return await ask_in_client(self.server.protocol, request)
        who = "shiro-neko's task subagent" if request.parent_tool_call_id else "shiro-neko"
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"{who} wants to {request.summary}",
            actions=[types.MessageActionItem(title=t) for t in (wire.ALLOW, wire.ALWAYS_ALLOW, wire.DENY)],
        )
        try:
            answer = await self.server.window_show_message_request_async(params)
        except Exception as exc:  # the client could not show it: treat as not allowed
            log.warning("approval dialog failed: %s", exc)
            return "deny"
        title = getattr(answer, "title", None)
        return {wire.ALLOW: "allow", wire.ALWAYS_ALLOW: "always"}.get(title or "", "deny")  # type: ignore[return-value]

    async def ask(self, message: str, actions: list[str]) -> str | None:
        """A question with buttons; the chosen title, or None when dismissed or not shown."""
        if wire.TRUST in actions and offers_client_approvals(self.server.client_capabilities.experimental):
            return await ask_trust_in_client(self.server.protocol, message)
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[types.MessageActionItem(title=t) for t in actions],
        )
        try:
            answer = await self.server.window_show_message_request_async(params)
        except Exception as exc:
            log.warning("question to the user failed: %s", exc)
            return None
        title = getattr(answer, "title", None)
        return title if title in actions else None


@functools.lru_cache(maxsize=1024)
def _uri_fs_path(uri: str) -> Path | None:
    # grep asks once per file searched; resolving every open document each time adds up.
    fs_path = to_fs_path(uri)
    return Path(fs_path).resolve() if fs_path else None


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _end_position(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=_utf16_len(lines[-1]))


class LspToolHost(DiskToolHost):
    """Open buffers are what the agent reads; edits to them go through `workspace/applyEdit`."""

    def __init__(self, root: Path, server: "LanguageServer") -> None:
        super().__init__(root)
        self.server = server
        # shiro/diagnostics and shiro/navigate, when the client declared them (agent/tools/editor_tools.py).
        self.editor = LspEditor(server)

    def _open_document(self, path: Path) -> Any | None:
        try:
            documents = self.server.workspace.text_documents
        except RuntimeError:  # before initialize
            return None
        if not documents:
            return None
        wanted = path.resolve()
        for uri, document in documents.items():
            if _uri_fs_path(uri) == wanted:
                return document
        return None

    def open_document_text(self, path: Path) -> str | None:
        document = self._open_document(path)
        return document.source if document is not None else None

    def open_documents(self) -> list[tuple[Path, str]]:
        try:
            documents = self.server.workspace.text_documents
        except RuntimeError:  # before initialize
            return []
        out = []
        for uri, document in (documents or {}).items():
            path = _uri_fs_path(uri)
            if path is not None:
                out.append((path, document.source))
        return out

    def _capabilities(self) -> types.ClientCapabilities:
        return self.server.client_capabilities

    def _can_apply_edit(self) -> bool:
        workspace = self._capabilities().workspace
        return bool(workspace and workspace.apply_edit)

    def _can_create_files(self) -> bool:
        workspace = self._capabilities().workspace
        edit = workspace.workspace_edit if workspace else None
        ops = (edit.resource_operations or []) if edit else []
        return bool(edit and edit.document_changes) and types.ResourceOperationKind.Create in ops

    def _offers_save_documents(self) -> bool:
        experimental = wire.plain(self._capabilities().experimental)
        shiro = experimental.get("shiro") if isinstance(experimental, dict) else None
        return bool(isinstance(shiro, dict) and shiro.get("saveDocuments"))

    async def _save(self, path: Path, new_text: str) -> None:
        """The editor saves its buffer when it offers `shiro/saveDocuments`. Otherwise the edit
        stays in the buffer, unsaved, as any edit the user makes: writing the file behind the
        editor's back left Emacs with a stale modification time ("changed since visited" at the
        user's next save). The agent reads open buffers, so it sees its edit either way."""
        if not self._offers_save_documents():
            return
        try:
            await self.server.protocol.send_request_async(wire.SAVE_DOCUMENTS, wire.to_wire(wire.SaveDocumentsParams(uris=[path.as_uri()])))
        except Exception as exc:  # the buffer holds the edit; the user saves it
            log.warning("%s failed (%s); the edit stays unsaved in the editor", wire.SAVE_DOCUMENTS, exc)

    async def _apply(self, edit: types.WorkspaceEdit, label: str, path: Path, new_text: str) -> bool:
        """The editor applies the edit (the user sees it, with undo); then it is saved."""
        result = await self.server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
        if not result.applied:
            return False
        await self._save(path, new_text)
        return True

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        document = self._open_document(path)
        if self._can_apply_edit() and document is not None:
            edit = types.WorkspaceEdit(
                changes={
                    document.uri: [
                        types.TextEdit(
                            range=types.Range(types.Position(0, 0), _end_position(document.source)),
                            new_text=new_text,
                        )
                    ]
                }
            )
            return await self._apply(edit, "shiro-neko edit", path, new_text)
        if create and self._can_apply_edit() and self._can_create_files():
            uri = path.as_uri()
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True)),
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                        edits=[types.TextEdit(range=types.Range(types.Position(0, 0), types.Position(0, 0)), new_text=new_text)],
                    ),
                ]
            )
            return await self._apply(edit, "shiro-neko new file", path, new_text)
        return await super().apply_text(path, new_text, create=create)
