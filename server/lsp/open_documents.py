"""The editor's open documents, kept in memory up to a size (issue 35, item 9).

pygls keeps the text of every document the client opens (`didOpen`) and applies each `didChange`
to it, with no bound: a repository's 200 MB generated file, or a client that sends one, would sit
in the server's memory (twice, while a change is applied) for as long as it is open. Here a
document over MAX_DOCUMENT_CHARS, or one that would take all open documents past MAX_TOTAL_CHARS,
is not kept: the server remembers only that it is open, and the agent's reads, searches and edits
of it go to the file on disk (lsp/bridge.py finds no buffer for it), as for a file that is not
open. A later whole-document change that fits brings it back into memory.

Why 4 Mi characters: no hand-written source file comes near it (the largest files of CPython or
the Linux kernel are under 1 MB), and grep already skips files over 5 MB
(agent/tools/search.py), so every document the agent would search in memory is still kept. The
total bounds many such files open at once. Both are characters, as the text arrives (a str).
"""

from __future__ import annotations

import logging
from typing import Any, cast
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import Workspace

from .pygls_overrides import drop_document, kept_document

log = logging.getLogger(__name__)

MAX_DOCUMENT_CHARS = 4 * 1024 * 1024
MAX_TOTAL_CHARS = 64 * 1024 * 1024


class CappedWorkspace(Workspace):
    """pygls's Workspace with the caps above on the text it keeps. Installed over the instance
    pygls makes at `initialize` (`cap_documents`): every path that stores text (didOpen, didChange,
    a notebook's cells) goes through these three methods."""

    # Set by cap_documents (the instance was made by pygls, not by this class's __init__).
    _shiro_unkept: set[str]  # open in the editor, text not kept: reads go to the disk
    _shiro_sizes: dict[str, int]  # characters of each kept document
    _shiro_total: int

    def _shiro_fits(self, uri: str, chars: int) -> bool:
        others = self._shiro_total - self._shiro_sizes.get(uri, 0)
        return chars <= MAX_DOCUMENT_CHARS and others + chars <= MAX_TOTAL_CHARS

    def _shiro_forget(self, uri: str, why: str | None) -> None:
        drop_document(self, uri)
        self._shiro_total -= self._shiro_sizes.pop(uri, 0)
        if why is not None:
            self._shiro_unkept.add(uri)
            log.info("open document %s not kept in memory (%s): the agent reads it from disk", uri, why)

    def _shiro_kept(self, uri: str, chars: int) -> None:
        self._shiro_unkept.discard(uri)
        self._shiro_total += chars - self._shiro_sizes.get(uri, 0)
        self._shiro_sizes[uri] = chars

    def put_text_document(self, text_document: types.TextDocumentItem, notebook_uri: str | None = None) -> None:
        uri = unquote(text_document.uri)
        chars = len(text_document.text)
        if not self._shiro_fits(uri, chars):
            self._shiro_forget(uri, f"{chars:,} characters")
            return
        super().put_text_document(text_document, notebook_uri)
        self._shiro_kept(uri, chars)

    def update_text_document(self, text_doc: types.VersionedTextDocumentIdentifier,
                             change: types.TextDocumentContentChangeEvent) -> None:
        uri = unquote(text_doc.uri)
        document = kept_document(self, uri)
        whole = isinstance(change, types.TextDocumentContentChangeWholeDocument)
        if document is None:
            if uri in self._shiro_unkept and whole and self._shiro_fits(uri, len(change.text)):
                # The whole text again, and it fits now: kept from here on.
                self.put_text_document(types.TextDocumentItem(uri=text_doc.uri, language_id="",
                                                              version=text_doc.version, text=change.text))
            return  # not kept (or never opened): nothing to apply a change to; reads go to disk
        if len(change.text) > MAX_DOCUMENT_CHARS:  # decided before the text is spliced in
            self._shiro_forget(uri, f"a change of {len(change.text):,} characters")
            return
        super().update_text_document(text_doc, change)
        chars = len(document.source)  # the text in memory (a kept document always has one)
        if self._shiro_fits(uri, chars):
            self._shiro_kept(uri, chars)
        else:
            self._shiro_forget(uri, f"{chars:,} characters after a change")

    def remove_text_document(self, doc_uri: str) -> None:
        uri = unquote(doc_uri)
        super().remove_text_document(doc_uri)
        self._shiro_forget(uri, None)
        self._shiro_unkept.discard(uri)


def cap_documents(workspace: Any) -> None:
    """Make the Workspace pygls just created at `initialize` a CappedWorkspace (no document is
    open yet). Only pygls's own class is changed: anything else is left as it is."""
    if type(workspace) is not Workspace:
        return
    workspace.__class__ = CappedWorkspace
    capped = cast(CappedWorkspace, workspace)
    capped._shiro_unkept = set()
    capped._shiro_sizes = {}
    capped._shiro_total = 0
