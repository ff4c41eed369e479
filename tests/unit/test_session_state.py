"""The session's durable state and its record: one Struct, written and read whole.

`data/session_record_a8641b0.json` was written by the code before the split (main at a8641b0,
`features.sessions.to_record` + `encode_record`), byte for byte; it must load, and a session
running on it must write the same bytes back (only the save's stamps may differ).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from tests.support.sink import ListSink
from shiro_neko.agent.session import AgentSession, SessionDeps
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.config import Settings
from shiro_neko.features.sessions import to_record
from shiro_neko.model.session_state import SessionState
from shiro_neko.model.todo import Todo
from shiro_neko.model.transcript import ReasoningPart, TextPart, ToolResultPart, UserMessage
from shiro_neko.state.session_record import SessionRecord, decode_record, encode_record, record_of

OLD_RECORD = Path(__file__).parent / "data" / "session_record_a8641b0.json"


def test_a_record_written_before_the_split_loads_and_re_encodes_byte_for_byte() -> None:
    data = OLD_RECORD.read_bytes()
    record = decode_record(data)
    assert record.id == "0193ab2c-5d1e-7a3b-9c4d-0e1f2a3b4c5d" and record.cwd == "/home/you/project"
    assert (record.input_tokens, record.output_tokens, record.cost_usd) == (48210, 3105, 0.0913)
    assert record.notebook.todos[1] == Todo("fix the off-by-one", "in_progress", note="page 2 repeats the last row")
    assert [type(m).__name__ for m in record.messages] == ["UserMessage"] + ["AssistantMessage", "ToolMessage"] * 2 + ["AssistantMessage"]
    assert isinstance(record.messages[1].content[0], ReasoningPart) and record.messages[1].content[0].encrypted_content == "gAAAA"
    assert isinstance(record.messages[4].content[0], ToolResultPart) and record.messages[4].content[0].is_error
    assert record.span_summaries == {"call_1": "read tests/test_page.py: one test of page 2"}
    assert record.side_usage == {"inputTokens": 1200, "outputTokens": 80}
    assert record.private and record.turns_since_refresh == 2
    assert encode_record(record) == data


def test_a_session_running_on_a_loaded_record_writes_the_same_record(tmp_path: Path) -> None:
    data = OLD_RECORD.read_bytes()
    deps = SessionDeps(settings=Settings, sink=ListSink(), host=DiskToolHost(tmp_path), provider=lambda s: None)
    session = AgentSession(decode_record(data), deps)
    assert session.id == "0193ab2c-5d1e-7a3b-9c4d-0e1f2a3b4c5d" and session.root == Path("/home/you/project")
    assert session.todos[0].content == "read the test" and session.span_summaries == {"call_1": "read tests/test_page.py: one test of page 2"}
    written = msgspec.structs.replace(to_record(session, "gpt-5"), updated_at="2025-01-01T12:34:56.789Z")
    assert encode_record(written) == data


def test_the_record_is_a_snapshot_of_the_state() -> None:
    state = SessionState(id="s", cwd="/w", messages=[UserMessage(content=[TextPart("one")])])
    state.notebook.todos.append(Todo("a", "pending"))
    record = record_of(state, created_at="2025-01-01T00:00:00.000Z", updated_at="2025-01-01T00:00:00.000Z")
    state.messages.append(UserMessage(content=[TextPart("two")]))
    state.notebook.todos.append(Todo("b", "pending"))
    state.span_summaries["k"] = "v"
    assert isinstance(record, SessionRecord) and len(record.messages) == 1 and len(record.notebook.todos) == 1
    assert record.span_summaries == {}


def test_the_record_has_every_field_of_the_state_in_the_same_order() -> None:
    # The record adds no field and reorders none: on disk the keys stay in docs/state-files.md's order.
    assert SessionRecord.__struct_fields__ == SessionState.__struct_fields__
    assert set(SessionState.__struct_fields__) >= {f for f in ("id", "created_at", "updated_at", "cwd", "notebook", "messages")}
