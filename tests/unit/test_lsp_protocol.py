"""The pygls 2.1.1 mends in lsp.py, in process: finished handler futures are not kept forever."""

from __future__ import annotations

import asyncio
import io

from lsprotocol import types

from shiro_neko.lsp import create_server


async def test_notifications_and_commands_leave_no_futures_behind(tmp_path) -> None:
    server = create_server()
    protocol = server.protocol
    protocol.set_writer(io.BytesIO())
    protocol._handle_request(
        1, types.INITIALIZE, types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri())
    )
    protocol._handle_notification(types.INITIALIZED, types.InitializedParams())
    uri = (tmp_path / "a.py").as_uri()
    protocol._handle_notification(
        types.TEXT_DOCUMENT_DID_OPEN,
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text="x\n")),
    )
    for version in range(2, 102):
        protocol._handle_notification(
            types.TEXT_DOCUMENT_DID_CHANGE,
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=f"x = {version}\n")],
            ),
        )
    for n in range(50):
        protocol._handle_request(
            100 + n, types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command="shiro.history", arguments=[{}])
        )
    for _ in range(200):
        await asyncio.sleep(0.01)
        if not protocol._request_futures:
            break
    assert len(protocol._request_futures) == 0  # pygls alone keeps about 150 here
    assert server.workspace.get_text_document(uri).source == "x = 101\n"
