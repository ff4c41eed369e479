"""Open documents have a size cap (issue 35, item 9; server/lsp/open_documents.py): a document over
it is not kept from didOpen/didChange, and the agent reads the file on disk instead; the server
answers at once after it. Before, the server kept every byte a client opened, without bound."""

from __future__ import annotations

from lsprotocol import types

from shiro_neko.lsp.open_documents import MAX_DOCUMENT_CHARS
from tests.fake_provider import Call, Reply

HUGE = 20 * 1024 * 1024


def _results(harness, turn_id):
    return [e["output"] for e in harness.of_turn(turn_id) if e["type"] == "tool_result"]


async def test_a_huge_open_document_is_read_from_disk(harness):
    big = harness.root / "big.txt"
    big.write_text("ON DISK\n")
    uri = big.as_uri()
    text = ("IN THE BUFFER " * 7 + "\n") * (HUGE // 99)
    assert len(text) > MAX_DOCUMENT_CHARS
    harness.client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text=text)))
    # A ranged change to a document not kept is ignored (nothing to apply it to), not an error.
    harness.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="MORE ")]))
    # Still answering, and the document small enough to keep (hello.py) is read from its buffer.
    status = await harness.command("shiro.status")
    assert status is not None
    hello = (harness.root / "hello.py").as_uri()
    harness.client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=hello, language_id="python", version=1, text="print('unsaved buffer')\n")))
    harness.fake.script(
        Reply(calls=[Call("read_file", {"path": "big.txt"}, "c1"), Call("grep", {"pattern": "IN THE BUFFER"}, "c2"),
                     Call("read_file", {"path": "hello.py"}, "c3")]),
        Reply(text="read"),
    )
    result = await harness.chat("read them")
    big_read, grep, hello_read = _results(harness, result["turnId"])
    assert "ON DISK" in big_read and "IN THE BUFFER" not in big_read
    assert "big.txt" not in grep
    assert "unsaved buffer" in hello_read

    # The whole text again, small now: kept, and read from the buffer once more.
    harness.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="SMALL BUFFER\n")]))
    harness.fake.script(Reply(calls=[Call("read_file", {"path": "big.txt"})]), Reply(text="read"))
    result = await harness.chat("read it again")
    [again] = _results(harness, result["turnId"])
    assert "SMALL BUFFER" in again
