"""The open-document caps' bookkeeping on pygls's own Workspace (server/lsp/open_documents.py); the
end-to-end case is tests/lsp/test_open_documents.py. Fails when a pygls upgrade moves the methods
the caps go through."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import Workspace

from shiro_neko.lsp import open_documents
from shiro_neko.lsp.open_documents import CappedWorkspace, cap_documents


@pytest.fixture
def ws(monkeypatch: pytest.MonkeyPatch) -> CappedWorkspace:
    monkeypatch.setattr(open_documents, "MAX_DOCUMENT_CHARS", 100)
    monkeypatch.setattr(open_documents, "MAX_TOTAL_CHARS", 250)
    workspace = Workspace("file:///w", types.TextDocumentSyncKind.Incremental)
    cap_documents(workspace)
    assert isinstance(workspace, CappedWorkspace)
    return workspace


def _open(ws: Workspace, name: str, text: str) -> None:
    ws.put_text_document(types.TextDocumentItem(uri=f"file:///w/{name}", language_id="", version=1, text=text))


def _insert(ws: Workspace, name: str, text: str) -> None:
    ws.update_text_document(types.VersionedTextDocumentIdentifier(uri=f"file:///w/{name}", version=2),
                            types.TextDocumentContentChangePartial(range=types.Range(types.Position(0, 0), types.Position(0, 0)), text=text))


def test_per_document_and_total_caps(ws: CappedWorkspace) -> None:
    _open(ws, "big", "x" * 101)
    assert "file:///w/big" not in ws.text_documents and ws._shiro_total == 0
    _open(ws, "a", "a" * 100)
    _open(ws, "b", "b" * 100)
    _open(ws, "c", "c" * 100)  # past the total: not kept
    assert sorted(ws.text_documents) == ["file:///w/a", "file:///w/b"] and ws._shiro_total == 200
    _insert(ws, "a", "!")  # grows past the per-document cap: dropped, its share given back
    assert "file:///w/a" not in ws.text_documents and ws._shiro_total == 100
    _insert(ws, "a", "ignored")  # a ranged change to a document not kept: nothing happens
    ws.update_text_document(types.VersionedTextDocumentIdentifier(uri="file:///w/c", version=3),
                            types.TextDocumentContentChangeWholeDocument(text="small"))
    assert ws.text_documents["file:///w/c"].source == "small" and ws._shiro_total == 105
    ws.remove_text_document("file:///w/b")
    ws.remove_text_document("file:///w/a")
    assert ws._shiro_total == 5 and ws._shiro_unkept == {"file:///w/big"}


def test_only_pygls_own_class_is_changed() -> None:
    class Other(Workspace):
        pass

    other = Other("file:///w", types.TextDocumentSyncKind.Incremental)
    cap_documents(other)
    assert type(other) is Other
