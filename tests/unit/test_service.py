"""The service driven directly, without LSP: prompts through `submit_chat`, the real HTTP fake as
the provider, real files in a temporary SHIRO_NEKO_HOME (tests/support/service.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.errors import Refused
from shiro_neko.protocol import NEVER_WRITTEN, ChatArgs, SessionArgs
from tests.fake_provider import FakeProvider, Reply
from tests.support.service import chat, running_service


async def saved_record(shiro_home: Path, session_id: str, messages: int, timeout: float = 10.0) -> dict[str, Any]:
    """The session's record once it holds `messages` messages (autosave runs in a thread)."""
    path = shiro_home / "sessions" / f"{session_id}.json"
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            record: dict[str, Any] = json.loads(path.read_bytes())
            if len(dialogue(record)) == messages:
                return record
        except FileNotFoundError:
            pass
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{path} never held {messages} messages")
        await asyncio.sleep(0.02)


def dialogue(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's messages without the context messages (agent/context_messages.py), as `shown` does."""
    return [m for m in record["messages"] if not m.get("context")]


def texts(record: dict[str, Any]) -> list[str]:
    return [p["text"] for m in dialogue(record) for p in m["content"] if "text" in p]


async def test_a_turn_runs_on_the_provider_and_its_end_saves_the_session(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    fake.script(Reply(text="hello there"))
    async with running_service(fake, workspace) as service:
        session, outcome = await chat(service, "say hello")
        assert outcome.status == "completed" and outcome.text == "hello there"
        record = await saved_record(shiro_home, session.id, 2)
        assert texts(record) == ["say hello", "hello there"]
        assert record["title"] == "say hello" and record["cwd"] == str(workspace.resolve())
        assert len(fake.main_requests) == 1


async def test_the_next_prompt_goes_to_the_current_session(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    fake.script(Reply(text="one"), Reply(text="two"))
    async with running_service(fake, workspace) as service:
        first, _ = await chat(service, "first")
        second, _ = await chat(service, "second")
        assert second is first
        assert service.status(SessionArgs()).sessionId == first.id
        await saved_record(shiro_home, first.id, 4)


async def test_an_empty_prompt_is_refused_and_nothing_is_sent(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    async with running_service(fake, workspace) as service:
        with pytest.raises(Refused, match="the prompt is empty"):
            service.submit_chat(ChatArgs(prompt="  \n"))
        assert service.sessions == {} and fake.requests == []


async def test_an_unknown_session_or_folder_is_refused(shiro_home: Path, fake: FakeProvider, workspace: Path, tmp_path: Path) -> None:
    async with running_service(fake, workspace) as service:
        with pytest.raises(Refused, match="no open session 'nope' on this server"):
            service.submit_chat(ChatArgs(prompt="hi", sessionId="nope"))
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        with pytest.raises(Refused, match="is not a workspace folder of this server"):
            service.submit_chat(ChatArgs(prompt="hi", workspace=elsewhere.as_uri()))
        assert service.sessions == {} and fake.requests == []


async def test_an_attachment_outside_the_workspace_is_refused(shiro_home: Path, fake: FakeProvider, workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("not yours\n")
    async with running_service(fake, workspace) as service:
        with pytest.raises(Refused, match="cannot attach '../secret.txt'"):
            service.submit_chat(ChatArgs(prompt="read it", attachments=["../secret.txt"]))
        assert fake.requests == []


async def test_shutdown_saves_and_says_so_per_workspace(shiro_home: Path, fake: FakeProvider, workspace: Path, tmp_path: Path) -> None:
    quiet = tmp_path / "quiet"
    quiet.mkdir()
    fake.script(Reply(text="done"))
    async with running_service(fake, workspace, quiet) as service:
        session, _ = await chat(service, "do it", workspace=workspace.resolve().as_uri())
        lines: list[str] = []
        await service.flush(lines.append)
        assert len(lines) == 2
        assert lines[0].startswith('Saved 2 messages: "do it"') and f"shiro -r {session.id[:8]}" in lines[0]
        assert lines[1] == NEVER_WRITTEN
        assert texts(await saved_record(shiro_home, session.id, 2)) == ["do it", "done"]


async def test_a_short_term_memory_update_the_database_never_took_is_a_notice(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    # Another process holds the database's write lock past the wait: the update is lost, and the
    # user hears of it (a notice), not only the model (its error result).
    import sqlite3

    from shiro_neko.agent.short_term_memory import TOOL_NAME
    from shiro_neko.state.short_term_memory import FILE_NAME
    from tests.fake_provider import Call

    fake.script(Reply(calls=[Call(TOOL_NAME, {"summary": "the plan so far"})]), Reply(text="noted"))
    async with running_service(fake, workspace) as service:
        store = service.short_term_memory.store
        store.busy_timeout_s = 0.3
        assert store.get("nothing yet") is None  # the database exists; reads go on under the lock
        holder = sqlite3.connect(shiro_home / FILE_NAME, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            session, outcome = await chat(service, "remember the plan")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert outcome.status == "completed"
        notices = [e["message"] for e in service.bridge.sink.events if e["type"] == "notice"]
        assert any(m.startswith("short-term memory not updated:") and "locked" in m for m in notices), notices
        assert store.get(session.id) is None
