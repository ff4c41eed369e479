"""protocol.py is the wire: every payload a Struct, each encoding to docs/protocol.md's shape, every
served command registered, and docs/protocol.schema.json generated from it and not stale."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from shiro_neko import protocol as wire
from shiro_neko.lsp import create_server
from shiro_neko.model.todo import Todo
from shiro_neko.protocol_schema import DEFAULT_PATH, render

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server"
IDS = {"sessionId": "s", "turnId": "t"}


@pytest.mark.parametrize(
    "event,expected",
    [
        (wire.TurnStartEvent(**IDS), {"type": "turn_start"}),
        (wire.TextDeltaEvent(**IDS, text="hi"), {"type": "text_delta", "text": "hi"}),
        (wire.ReasoningDeltaEvent(**IDS, text="hm"), {"type": "reasoning_delta", "text": "hm"}),
        (
            wire.ToolCallEvent(**IDS, toolCallId="c1", toolName="read_file", input={"path": "a"}),
            {"type": "tool_call", "toolCallId": "c1", "toolName": "read_file", "input": {"path": "a"}},
        ),
        (
            wire.ToolResultEvent(**IDS, toolCallId="c1", output="x", isError=False),
            {"type": "tool_result", "toolCallId": "c1", "output": "x", "isError": False},
        ),
        (
            wire.CompactedEvent(**IDS, before=9, after=3, message="m"),
            {"type": "compacted", "before": 9, "after": 3, "message": "m"},
        ),
        (wire.NoticeEvent(**IDS, message="n"), {"type": "notice", "message": "n"}),
        (wire.QueuedEvent(**IDS, position=1), {"type": "queued", "position": 1}),
        (wire.TurnEndEvent(**IDS, status="completed", text="ok"), {"type": "turn_end", "status": "completed", "text": "ok"}),
        (
            wire.TurnEndEvent(**IDS, status="error", text="", error="boom"),
            {"type": "turn_end", "status": "error", "text": "", "error": "boom"},
        ),
    ],
)
def test_events_encode_to_the_documented_shape_and_back(event: Any, expected: dict[str, Any]) -> None:
    sent = msgspec.to_builtins(event)
    assert sent == {**IDS, **expected}
    assert msgspec.convert(sent, wire.Event) == event  # a client decoding the union gets it back


def test_payloads_encode_as_documented() -> None:
    todos = wire.TodosNotification(sessionId="s", todos=[Todo("a", "blocked", "why")], rendered="r", warnings=[])
    assert msgspec.to_builtins(todos) == {
        "sessionId": "s", "todos": [{"content": "a", "status": "blocked", "note": "why"}], "rendered": "r", "warnings": [],
    }
    assert msgspec.to_builtins(wire.SaveResult(saved=False, messageCount=0, reason="r")) == {
        "saved": False, "messageCount": 0, "reason": "r",
    }
    resumed = wire.ResumeResult(sessionId="s", title="t", messages=[], todos=[])
    assert msgspec.to_builtins(resumed) == {"sessionId": "s", "title": "t", "messages": [], "todos": []}
    row = wire.SessionSummary(id="i", title="t", created_at="c", updated_at="u", message_count=2, cwd="/w")
    assert msgspec.to_builtins(row) == {"id": "i", "title": "t", "createdAt": "c", "updatedAt": "u", "messageCount": 2, "cwd": "/w"}


def test_every_served_command_is_registered_with_its_types() -> None:
    served = set(create_server().protocol.fm.commands)
    assert served == set(wire.COMMANDS)
    for spec in wire.COMMANDS.values():
        assert issubclass(spec.args, wire.Args) and issubclass(spec.result, msgspec.Struct), spec.name


def test_schema_file_is_generated_from_protocol_py() -> None:
    assert DEFAULT_PATH.read_text(encoding="utf-8") == render(), (
        "docs/protocol.schema.json is stale: run `python -m shiro_neko.protocol_schema`"
    )
    check = subprocess.run([sys.executable, "-m", "shiro_neko.protocol_schema", "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_schema_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text(render().replace("shiro.chat", "shiro.chatty"), encoding="utf-8")
    check = subprocess.run(
        [sys.executable, "-m", "shiro_neko.protocol_schema", "--check", "-o", str(stale)], capture_output=True, text=True
    )
    assert check.returncode == 1 and "stale" in check.stderr


def _wire_dict_literals(path: Path) -> list[int]:
    """Lines of dict literals shaped like a payload (a `sessionId` or `type` key)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value in ("sessionId", "turnId", "messageCount") for k in node.keys)
    ]


def test_no_wire_payload_is_a_dict_literal_in_the_server() -> None:
    offenders = [
        f"{p.relative_to(ROOT)}:{line}"
        for p in sorted(SERVER.rglob("*.py"))
        # acp/ speaks ACP, whose payloads are the SDK's schema types (the terminal client, which
        # reads payloads, is in clients/terminal/)
        if "acp" not in p.relative_to(SERVER).parts
        for line in _wire_dict_literals(p)
    ]
    assert not offenders, "build these as protocol.py Structs:\n" + "\n".join(offenders)
