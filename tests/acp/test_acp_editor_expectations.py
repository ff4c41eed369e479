"""What ACP editors (acpx, Zed) expect of `shiro acp` (issue 26), driven by the official Python client:
a session id handed out by `session/new` stays loadable by a later process, notices reach the
editor apart from the answer's text, a call shows `in_progress` once allowed, the editor sees a
call before it is asked for a file, and an edit reads its file once."""

from __future__ import annotations

from typing import Any

from acp import schema

from tests.acp.conftest import EditorClient, records, run_acp
from tests.fake_provider import Call, Reply


async def test_a_new_session_without_a_prompt_loads_in_a_later_process(tmp_path, fake, workspace):
    home = tmp_path / "home"
    async with run_acp(home, workspace, fake) as first:
        session_id = await first.new_session()
    assert records(home) == []  # nothing to write yet: it had no message

    fake.script(Reply(text="Loaded and answering."))
    async with run_acp(home, workspace, fake) as second:
        await second.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        answer = await second.prompt(session_id, "hello again")
        assert answer.stop_reason == "end_turn"
        assert second.client.text() == "Loaded and answering."
    assert [r["id"] for r in records(home)] == [session_id]  # the same session, not another one


async def test_an_unknown_session_id_is_still_refused(tmp_path, fake, workspace):
    async with run_acp(tmp_path / "home", workspace, fake) as acp:
        for bad in ("nope", "0190a2b4-0000-4000-8000-000000000000"):  # not ours; a UUID, but not v7
            try:
                await acp.conn.load_session(cwd=str(workspace), session_id=bad, mcp_servers=[])
            except Exception as exc:
                assert getattr(exc, "code", None) == -32602
            else:
                raise AssertionError(f"{bad} was loaded")


async def test_a_notice_reaches_the_editor_apart_from_the_answer(tmp_path, fake, workspace):
    ghost = schema.McpServerStdio(name="ghost", command=str(tmp_path / "no-such-server"), args=[], env=[])
    async with run_acp(tmp_path / "home", workspace, fake) as acp:
        fake.script(Reply(text="The answer."))
        session_id = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[ghost])).session_id
        assert (await acp.prompt(session_id, "hi")).stop_reason == "end_turn"
        assert acp.client.text() == "The answer."  # what `acpx --format quiet` prints
        notices = [u for u in acp.client.of_kind("tool_call") if (u.field_meta or {}).get("shiro", {}).get("notice")]
        assert any("ghost" in n.title for n in notices), [u.title for u in acp.client.of_kind("tool_call")]


class OrderedEditor(EditorClient):
    """Records updates and file reads in one sequence."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[tuple[str, ...]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if update.session_update in ("tool_call", "tool_call_update"):
            self.order.append((update.session_update, update.tool_call_id, str(update.status)))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.order.append(("read", path))
        return await super().read_text_file(session_id, path, **kwargs)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.order.append(("permission", tool_call.tool_call_id))
        return await super().request_permission(session_id, tool_call, options, **kwargs)


async def test_an_allowed_edit_is_in_progress_after_the_call_is_shown_and_reads_once(tmp_path, fake, workspace):
    editor = OrderedEditor()
    hello = str(workspace / "hello.py")
    async with run_acp(tmp_path / "home", workspace, fake, client=editor, fs=True) as acp:
        fake.script(
            Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"}, "call_e")]),
            Reply(text="Changed."),
        )
        session_id = await acp.new_session()
        assert (await acp.prompt(session_id, "change it")).stop_reason == "end_turn"
    assert editor.writes == [(hello, "print('bye')\n")]
    assert editor.order == [
        ("tool_call", "call_e", "pending"),
        ("permission", "call_e"),
        ("tool_call_update", "call_e", "in_progress"),
        ("read", hello),  # once: neither a preview nor the diff reads it again
        ("tool_call_update", "call_e", "completed"),
    ], editor.order
