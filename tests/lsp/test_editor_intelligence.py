"""Issue 38 over LSP (docs/protocol.md "Editor context and intelligence"): the editor context
reaches the model as a context message before the prompt; an edit's result lists the errors it
introduced (only new ones) from `shiro/diagnostics`; the editor tools are offered only to a
client that declared them; code actions with and without diagnostics; inline edit accepted
(applied, checkpointed, rewound) and rejected. The client here answers the editor requests as a
scripted editor would; real language servers are in the client tests (tests/clients/)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from shiro_neko.protocol import plain
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client, stop

EDITOR_TOOLS = {"diagnostics", "find_definition", "find_references", "workspace_symbols"}


async def _client(tmp_path: Path, fake: Any, workspace: Path, editor: dict[str, bool] | None, wait_ms: int = 2000,
                  **experimental: Any) -> Any:
    home = tmp_path / "home"
    shiro: dict[str, Any] = dict(experimental)
    if editor is not None:
        shiro["editor"] = editor
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL),
                           experimental={"shiro": shiro} if shiro else None,
                           settings={"approvals": "auto", "diagnosticsWaitMs": wait_ms})
    h.focus = []  # type: ignore[attr-defined]

    @h.client.feature("shiro/focusChat")
    def on_focus(params: Any) -> None:
        h.focus.append(plain(params))  # type: ignore[attr-defined]

    return h


def _items(body: dict[str, Any]) -> list[str]:
    """Each input item of a Responses request as JSON text, in order."""
    return [json.dumps(item) for item in body["input"]]


def _tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools") or []}


def _range(l1: int, c1: int, l2: int, c2: int) -> dict[str, Any]:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


async def test_editor_context_reaches_the_model_as_a_context_message_before_the_prompt(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, None)
    try:
        uri = (workspace / "hello.py").as_uri()
        context = {"activeFile": uri, "cursor": {"line": 0, "character": 3},
                   "selection": {"uri": uri, "range": _range(0, 0, 0, 14), "text": "print('hello')"},
                   "visibleRange": {"uri": uri, "range": _range(0, 0, 0, 14)},
                   "openFiles": [uri, (workspace / "other.py").as_uri()]}
        fake.script(Reply(text="seen"), Reply(text="again"))
        first = await h.chat("what does this do?", context=context)
        assert first["status"] == "completed"
        body = fake.main_requests[-1].body
        items = _items(body)
        [at] = [i for i, item in enumerate(items) if "<editor_context>" in item]
        prompt_at = max(i for i, item in enumerate(items) if "what does this do?" in item)
        assert at < prompt_at  # before the prompt, in a message of its own
        said = json.loads(items[at])
        text = json.dumps(said)
        for fact in ("Active file: hello.py (cursor at line 1, column 4)", "Open files: hello.py, other.py",
                     "Selected in hello.py lines 1", "print('hello')"):
            assert fact in text, fact
        assert "what does this do?" not in text
        assert "<editor_context>" not in (body.get("instructions") or "")  # never in the instructions
        # The next prompt without context: the model is told the editor context is gone.
        await h.chat("and now?")
        items = _items(fake.main_requests[-1].body)
        assert any("<editor_context>\\n(none now)" in item for item in items)
        # Capped: a huge selection is cut and says how much was left out.
        fake.script(Reply(text="big"))
        context["selection"]["text"] = "x" * 50_000
        await h.chat("and this?", context=context)
        last = [item for item in _items(fake.main_requests[-1].body) if "<editor_context>" in item][-1]
        assert "44000 more not shown" in last and "x" * 6001 not in last
    finally:
        await stop(h)


async def test_a_context_field_the_server_does_not_know_is_refused(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, None)
    try:
        with pytest.raises(Exception, match="activefile"):
            await h.chat("hi", context={"activefile": "file:///x"})
        assert fake.main_requests == []
    finally:
        await stop(h)


async def test_an_edit_result_lists_only_the_errors_it_introduced(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, {"diagnostics": True})
    uri = (workspace / "hello.py").as_uri()
    asked: list[Any] = []
    old = {"range": _range(0, 0, 0, 5), "message": "old problem", "severity": 1, "code": "E1", "source": "lint"}
    warning = {"range": _range(0, 0, 0, 5), "message": "a new warning", "severity": 2, "source": "lint"}
    new = {"range": _range(1, 0, 1, 3), "message": "name 'shiro' is not defined", "severity": 1,
           "code": "reportUndefinedVariable", "source": "pyright"}

    @h.client.feature("shiro/diagnostics")
    def on_diagnostics(params: Any) -> Any:
        asked.append(plain(params))
        edited = "shiro" in (workspace / "hello.py").read_text()
        moved = {**old, "range": _range(1, 0, 1, 5)}  # the old error, moved by the edit: not new
        return {"items": [{"uri": uri, "diagnostics": [moved, warning, new] if edited else [old]}]}

    try:
        fake.script(Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "print('hello')",
                                                    "new_text": "x = 1\nprint(shiro)"}, "call_e1")]),
                    Reply(text="edited"))
        result = await h.chat("edit it")
        assert result["status"] == "completed"
        output = json.dumps(fake.main_requests[-1].body["input"][-1])
        assert "new errors after this edit" in output
        assert "hello.py:2:1: error reportUndefinedVariable: name 'shiro' is not defined (pyright)" in output
        assert "old problem" not in output and "a new warning" not in output
        assert asked[0] == {"uris": [uri]}  # the baseline, asked before the edit was applied
        assert len(asked) >= 3  # then polled until the answer settled
    finally:
        await stop(h)


async def test_an_edit_that_introduces_no_error_says_nothing_of_diagnostics(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, {"diagnostics": True})

    @h.client.feature("shiro/diagnostics")
    def on_diagnostics(params: Any) -> Any:
        return {"items": []}

    try:
        fake.script(Reply(calls=[Call("write_file", {"path": "new.py", "content": "ok = 1\n"}, "call_w")]), Reply(text="done"))
        await h.chat("write it")
        output = json.dumps(fake.main_requests[-1].body["input"][-1])
        assert "new errors" not in output and "new.py" in output
    finally:
        await stop(h)


async def test_a_clean_edit_returns_once_the_editor_republished(tmp_path, fake, workspace):
    """A client that counts publications (`generation`): an edit that changes no diagnostic returns
    once the count moved and held, not after the whole diagnosticsWaitMs (20 s here)."""
    h = await _client(tmp_path, fake, workspace, {"diagnostics": True}, wait_ms=20_000)
    uri = (workspace / "hello.py").as_uri()
    asked: list[Any] = []
    old = {"range": _range(0, 0, 0, 5), "message": "old problem", "severity": 1}

    @h.client.feature("shiro/diagnostics")
    def on_diagnostics(params: Any) -> Any:
        asked.append(plain(params))
        published = 2 if "# tidy" in (workspace / "hello.py").read_text() else 1
        return {"items": [{"uri": uri, "diagnostics": [old], "generation": published}]}

    try:
        fake.script(Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "print('hello')",
                                                    "new_text": "print('hello')  # tidy"}, "call_e1")]),
                    Reply(text="tidied"))
        assert (await h.chat("tidy it"))["status"] == "completed"
        assert "new errors" not in json.dumps(fake.main_requests[-1].body["input"][-1])
        # the baseline, the poll that saw the count move, three that saw it hold (not 200 polls)
        assert len(asked) <= 8, len(asked)
    finally:
        await stop(h)


@pytest.mark.parametrize("editor, offered", [
    (None, set()),
    ({}, set()),
    ({"diagnostics": True}, {"diagnostics"}),
    ({"navigation": True}, {"find_definition", "find_references", "workspace_symbols"}),
    ({"diagnostics": True, "navigation": True}, EDITOR_TOOLS),
])
async def test_editor_tools_are_offered_only_as_the_client_declared(tmp_path, fake, workspace, editor, offered):
    h = await _client(tmp_path, fake, workspace, editor)
    try:
        fake.script(Reply(text="hi"))
        await h.chat("hello")
        assert _tool_names(fake.main_requests[-1].body) & EDITOR_TOOLS == offered
    finally:
        await stop(h)


async def test_find_definition_asks_the_editor_at_the_symbols_position(tmp_path, fake, workspace):
    (workspace / "lib.py").write_text("def greet():\n    return 1\n")
    (workspace / "hello.py").write_text("from lib import greet\nprint(greet())\n")
    h = await _client(tmp_path, fake, workspace, {"navigation": True})
    asked: list[Any] = []

    @h.client.feature("shiro/navigate")
    def on_navigate(params: Any) -> Any:
        asked.append(plain(params))
        return {"locations": [{"uri": (workspace / "lib.py").as_uri(), "range": _range(0, 4, 0, 9)},
                              {"uri": "file:///usr/lib/python3/outside.py", "range": _range(9, 0, 9, 1)}]}

    try:
        fake.script(Reply(calls=[Call("find_definition", {"path": "hello.py", "line": 2, "symbol": "greet"}, "call_d")]),
                    Reply(text="found"))
        await h.chat("where is greet?")
        assert asked == [{"kind": "definition", "uri": (workspace / "hello.py").as_uri(),
                          "position": {"line": 1, "character": 6}}]
        output = json.dumps(fake.main_requests[-1].body["input"][-1])
        assert "lib.py:1:5  def greet():" in output
        # A location outside the workspace is named, never read.
        assert "/usr/lib/python3/outside.py:10:1" in output
    finally:
        await stop(h)


async def _code_actions(h: Any, uri: str, diagnostics: list[types.Diagnostic], only: list[str] | None = None) -> list[Any]:
    """The answer as JSON: lsprotocol's client-side hook reads every CodeAction that has a
    `command` as a Command (lsprotocol/_hooks.py `_code_action_hook`), so the typed result is
    not what an editor gets."""
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(types.Position(0, 0), types.Position(0, 5)),
        context=types.CodeActionContext(diagnostics=diagnostics, only=only))
    msg_id = f"code-action-{uri}-{len(diagnostics)}-{only}"
    answer = h.client.protocol.send_request(types.TEXT_DOCUMENT_CODE_ACTION, params, msg_id=msg_id)
    h.client.protocol._result_types.pop(msg_id, None)
    return plain(await asyncio.wrap_future(answer)) or []


async def test_code_actions_with_and_without_diagnostics(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, None)
    uri = (workspace / "hello.py").as_uri()
    h.client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text="print('hello')\n")))
    try:
        plain_actions = await _code_actions(h, uri, [])
        assert [a["title"] for a in plain_actions] == ["Ask shiro-neko…", "Explain with shiro-neko", "Edit with shiro-neko…"]
        assert all(a["command"]["command"] == "shiro.ask" for a in plain_actions)
        problem = types.Diagnostic(range=types.Range(types.Position(0, 0), types.Position(0, 5)),
                                   message="undefined name 'prnt'", severity=types.DiagnosticSeverity.Error,
                                   code="F821", source="flake8")
        actions = await _code_actions(h, "untitled:Untitled-1", [problem])  # any file, even unsaved
        assert [a["title"] for a in actions] == ["Ask shiro-neko…", "Fix with shiro-neko", "Explain with shiro-neko",
                                              "Edit with shiro-neko…"]
        fix = actions[1]
        assert fix["kind"] == "quickfix" and fix["diagnostics"][0]["message"] == "undefined name 'prnt'"
        assert fix["command"]["arguments"][0]["diagnostics"][0]["code"] == "F821"
        assert [a["title"] for a in await _code_actions(h, uri, [problem], only=["quickfix"])] == ["Fix with shiro-neko"]

        # Fix starts a turn at once with the diagnostics and the selection.
        fake.script(Reply(text="fixed"))
        argument = fix["command"]["arguments"][0]
        argument["uri"] = uri
        result = await h.command("shiro.ask", argument)
        assert result["action"] == "fix" and result["turnId"]
        await h.wait_for(lambda: any(e["type"] == "turn_end" and e["turnId"] == result["turnId"] for e in h.events))
        sent = json.dumps(fake.main_requests[-1].body["input"])
        assert "undefined name 'prnt' [F821] (flake8)" in sent and "Selected in hello.py lines 1:" in sent

        # Ask opens the client's chat with that context and starts nothing.
        before = len(fake.main_requests)
        answer = await h.command("shiro.ask", plain_actions[0]["command"]["arguments"][0])
        assert answer == {"sessionId": result["sessionId"], "action": "ask"}
        await h.wait_for(lambda: h.focus)
        [focus] = h.focus
        assert focus["action"] == "ask" and focus["context"]["selection"]["text"] == "print"
        assert len(fake.main_requests) == before
    finally:
        await stop(h)


async def test_inline_edit_accepted_is_applied_checkpointed_and_rewindable(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, None, saveDocuments=True)
    uri = (workspace / "hello.py").as_uri()
    (workspace / "hello.py").write_text("import os\nprint('hello')\n")
    h.client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text="import os\nprint('hello')\n")))
    try:
        # The model tries to write the file itself: refused without a question; then it answers.
        fake.script(Reply(calls=[Call("write_file", {"path": "hello.py", "content": "boom\n"}, "call_w")]),
                    Reply(text="Here:\n```python\nprint('shiro')\n```"))
        result = await h.command("shiro.inlineEdit", {"uri": uri, "range": _range(1, 0, 2, 0), "instruction": "greet shiro"})
        assert result["edit"] == {"changes": {uri: [{"range": _range(1, 0, 2, 0), "newText": "print('shiro')\n"}]}}
        first, second = fake.main_requests[-2:]
        assert "greet shiro" in json.dumps(first.body["input"])
        refusal = json.dumps(second.body["input"][-1])
        assert "refused: this turn is an inline edit" in refusal
        # The same tools as any turn (the prompt cache's prefix), but nothing was written.
        fake.script(Reply(text="plain turn"))
        await h.chat("hi")
        assert _tool_names(fake.main_requests[-1].body) == _tool_names(first.body)
        assert first.body.get("instructions") == fake.main_requests[-1].body.get("instructions")
        assert (workspace / "hello.py").read_text() == "import os\nprint('hello')\n"  # nothing applied yet
        assert h.edits == []

        resolved = await h.command("shiro.resolveInlineEdit", {"turnId": result["turnId"], "accept": True})
        assert resolved == {"applied": True}
        [edit] = h.edits
        assert (workspace / "hello.py").read_text() == "import os\nprint('shiro')\n"  # applied and saved by the editor
        # A normal turn: in the session's checkpoints with what it changed, and rewindable.
        checkpoints = (await h.command("shiro.checkpoints", {}))["checkpoints"]
        mine = next(c for c in checkpoints if c["turnId"] == result["turnId"])
        assert mine["files"] == [{"path": "hello.py", "change": "modified"}]
        h.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="import os\nprint('shiro')\n")]))
        rewound = await h.command("shiro.rewind", {"turnId": result["turnId"], "files": True})
        assert rewound["restored"] == ["hello.py"]
        assert (workspace / "hello.py").read_text() == "import os\nprint('hello')\n"
    finally:
        await stop(h)


async def test_inline_edit_rejected_changes_nothing(tmp_path, fake, workspace):
    h = await _client(tmp_path, fake, workspace, None)
    uri = (workspace / "hello.py").as_uri()
    try:
        fake.script(Reply(text="```\nprint('shiro')\n```"))
        result = await h.command("shiro.inlineEdit", {"uri": uri, "range": _range(0, 0, 0, 14), "instruction": "greet shiro"})
        assert result["edit"]["changes"][uri][0]["newText"] == "print('shiro')"
        assert await h.command("shiro.resolveInlineEdit", {"turnId": result["turnId"], "accept": False}) == {"applied": False}
        await asyncio.sleep(0)
        assert h.edits == [] and (workspace / "hello.py").read_text() == "print('hello')\n"
        with pytest.raises(Exception, match="no inline edit of turn"):
            await h.command("shiro.resolveInlineEdit", {"turnId": result["turnId"], "accept": True})
        # Files outside the workspace are refused before any turn.
        with pytest.raises(Exception, match="only files of this workspace"):
            await h.command("shiro.inlineEdit", {"uri": (tmp_path / "home" / "x.py").as_uri(), "range": _range(0, 0, 0, 1),
                                                 "instruction": "x"})
    finally:
        await stop(h)
