"""features/sessions.py driven through a real service, without LSP: autosave scheduling, resume
(latest, by prefix, refused arguments), a fork when another server holds the session (a second
service on the same home), and the goodbye lines. Real files in a temporary SHIRO_NEKO_HOME; the
provider is the HTTP fake (tests/support/service.py).

Saves are seen as new inodes of the record file (every save is an atomic replace). Timing rules
are checked by their lower bounds (never earlier than the rule allows), which cannot flake on a
loaded machine; where a test must tell "saved at once" from "saved after the debounce", the
debounce is stretched to a minute so the difference is not a matter of milliseconds.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shiro_neko.errors import InvalidArguments, Refused
from shiro_neko.features import sessions as sessions_feature
from shiro_neko.features.sessions import DEBOUNCE_S
from shiro_neko.protocol import NEVER_WRITTEN
from shiro_neko.model.transcript import shown
from shiro_neko.service import ShiroService
from tests.fake_provider import FakeProvider, Reply
from tests.support.builders import user
from tests.support.service import chat, running_service


class Saves:
    """Polls one record file: the monotonic time of every new inode (one per save)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.times: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = None
        while True:
            try:
                ino = os.stat(self.path).st_ino
                if ino != last:
                    self.times.append(time.monotonic())
                    last = ino
            except FileNotFoundError:
                pass
            await asyncio.sleep(0.005)

    def __enter__(self) -> Saves:
        self._task = asyncio.ensure_future(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()

    async def until(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.times) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(self.times)} saves of {self.path}, expected {count}")
            await asyncio.sleep(0.01)


@pytest.fixture
async def service(shiro_home: Path, fake: FakeProvider, workspace: Path) -> AsyncIterator[ShiroService]:
    async with running_service(fake, workspace) as running:
        yield running


def record_path(shiro_home: Path, session_id: str) -> Path:
    return shiro_home / "sessions" / f"{session_id}.json"


# ---------------------------------------------------------------------------------- autosave
async def test_changes_closer_than_the_debounce_are_saved_once_after_the_last(service: ShiroService, shiro_home: Path) -> None:
    session = service.new_session(service.workspaces.pick(None))
    with Saves(record_path(shiro_home, session.id)) as saves:
        for i in range(4):  # 100 ms apart: each one pushes the save back
            session.messages.append(user(f"change {i}"))
            service.persistence.changed(session, False)
            last_change = time.monotonic()
            await asyncio.sleep(0.1)
        await saves.until(1)
        await asyncio.sleep(DEBOUNCE_S + 0.3)
        assert len(saves.times) == 1  # one trailing save, not one per change
        assert saves.times[0] >= last_change + DEBOUNCE_S - 0.01  # and never before the debounce ran out
    assert len(service.persistence.store.load(session.id).messages) == 4


async def test_a_turn_end_saves_at_once_and_a_plain_change_waits(service: ShiroService, shiro_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions_feature, "DEBOUNCE_S", 60.0)
    monkeypatch.setattr(sessions_feature, "MAX_GAP_S", 120.0)
    session = service.new_session(service.workspaces.pick(None))
    with Saves(record_path(shiro_home, session.id)) as saves:
        session.messages.append(user("streaming"))
        service.persistence.changed(session, False)
        await asyncio.sleep(1.0)
        assert saves.times == []  # a minute's debounce: nothing yet
        session.messages.append(user("turn over"))
        service.persistence.changed(session, True)
        await saves.until(1)  # within seconds, not the minute
    assert [m.content[0].text for m in service.persistence.store.load(session.id).messages] == ["streaming", "turn over"]


async def test_the_ceiling_saves_while_changes_never_pause(service: ShiroService, shiro_home: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions_feature, "DEBOUNCE_S", 60.0)  # the debounce alone would never save
    monkeypatch.setattr(sessions_feature, "MAX_GAP_S", 0.5)
    session = service.new_session(service.workspaces.pick(None))
    with Saves(record_path(shiro_home, session.id)) as saves:
        first = time.monotonic()
        for i in range(25):  # 2.5 s of changes, 100 ms apart
            session.messages.append(user(f"delta {i}"))
            service.persistence.changed(session, False)
            await asyncio.sleep(0.1)
        await saves.until(2)
        assert saves.times[0] >= first + 0.5 - 0.01  # not before the ceiling came


async def test_nothing_is_written_for_a_session_without_messages(service: ShiroService, shiro_home: Path) -> None:
    session = service.new_session(service.workspaces.pick(None))
    service.persistence.changed(session, True)
    result = await service.persistence.save_command(session)
    await asyncio.sleep(DEBOUNCE_S + 0.2)
    assert not result.saved and result.messageCount == 0 and "no messages" in (result.reason or "")
    assert not record_path(shiro_home, session.id).exists()


async def test_after_a_save_nothing_is_rewritten_until_something_changes(service: ShiroService, shiro_home: Path) -> None:
    workspace = service.workspaces.pick(None)
    quiet = service.new_session(workspace)
    service.pinned.add(quiet.id)  # held by id, as an ACP editor does: it stays in memory
    with Saves(record_path(shiro_home, quiet.id)) as saves:
        quiet.messages.append(user("saved once"))
        service.persistence.changed(quiet, True)
        await saves.until(1)
        await asyncio.sleep(DEBOUNCE_S + 0.6)
        assert len(saves.times) == 1  # no change, no save
        unsaved = service.new_session(workspace)  # now the current one
        assert workspace.current is unsaved and quiet.id in service.sessions
        unsaved.messages.append(user("never saved"))
        service.persistence.changed(unsaved, False)  # pending: the flush writes it
        lines: list[str] = []
        await service.flush(lines.append)
        await asyncio.sleep(0.1)
        assert len(saves.times) == 1  # the quiet session was not written again at shutdown
    assert [m.content[0].text for m in service.persistence.store.load(unsaved.id).messages] == ["never saved"]
    assert lines[0].startswith('Saved 1 message: ""')


# ------------------------------------------------------------------------------------ resume
async def two_saved(service: ShiroService, fake: FakeProvider) -> tuple[str, str]:
    fake.script(Reply(text="first answer"), Reply(text="second answer"))
    first, _ = await chat(service, "first task")
    await service.persistence.save(first)
    second = service.new_session(service.workspaces.pick(None))
    _, _ = await chat(service, "second task", sessionId=second.id)
    await service.persistence.save(second)
    return first.id, second.id


async def test_resume_latest_and_by_prefix(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    async with running_service(fake, workspace) as service:
        first, second = await two_saved(service, fake)
    async with running_service(fake, workspace) as later:  # a new server on the same home
        ws = later.workspaces.pick(None)
        latest = await later.persistence.resume(ws, None, latest=True)
        assert latest.sessionId == second and latest.forkedFrom is None and latest.title == "second task"
        hint = later.persistence.store.resume_hint(first)  # what `shiro -r` is told to use
        assert len(hint) < len(first)
        by_prefix = await later.persistence.resume(ws, hint, latest=False)
        assert by_prefix.sessionId == first and by_prefix.forkedFrom is None
        assert [p.text for m in by_prefix.messages for p in m.content] == ["first task", "first answer"]
        assert ws.current is later.sessions[first]


async def test_resume_refuses_a_bad_argument_and_an_unknown_id(service: ShiroService) -> None:
    ws = service.workspaces.pick(None)
    with pytest.raises(InvalidArguments, match="either an id"):
        await service.persistence.resume(ws, "0193", latest=True)
    with pytest.raises(InvalidArguments, match="either an id"):
        await service.persistence.resume(ws, None, latest=False)
    with pytest.raises(Refused, match="no saved session"):
        await service.persistence.resume(ws, None, latest=True)
    with pytest.raises(Refused):
        await service.persistence.resume(ws, "ffffffff", latest=False)
    with pytest.raises(InvalidArguments, match="limit must be at least 1"):
        await service.persistence.list_saved(ws, 0)


async def test_a_session_another_server_writes_is_forked(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    async with running_service(fake, workspace) as a, running_service(fake, workspace) as b:
        fake.script(Reply(text="from a"), Reply(text="from b"), Reply(text="a goes on"))
        original, _ = await chat(a, "shared task")
        await a.persistence.save(original)  # a holds the lease from its first save
        resumed = await b.persistence.resume(b.workspaces.pick(None), original.id, latest=False)
        assert resumed.forkedFrom == original.id and resumed.sessionId != original.id
        assert [p.text for m in resumed.messages for p in m.content] == ["shared task", "from a"]
        fork = b.sessions[resumed.sessionId]
        assert b.persistence.store.load(fork.id).messages == original.messages  # the copy is on disk at once
        # Both carry on; neither overwrites the other.
        await chat(b, "in the fork", sessionId=fork.id)
        await b.persistence.save(fork)
        await chat(a, "in the original", sessionId=original.id)
        await a.persistence.save(original)
        texts_a = [p.text for m in shown(a.persistence.store.load(original.id).messages) for p in m.content]
        texts_b = [p.text for m in shown(b.persistence.store.load(fork.id).messages) for p in m.content]
        assert texts_a == ["shared task", "from a", "in the original", "a goes on"]
        assert texts_b == ["shared task", "from a", "in the fork", "from b"]
    async with running_service(fake, workspace) as c:  # a has shut down: its lease is free again
        again = await c.persistence.resume(c.workspaces.pick(None), original.id, latest=False)
        assert again.sessionId == original.id and again.forkedFrom is None


# ------------------------------------------------------------------------------ goodbye lines
async def test_goodbye_lines_for_an_empty_a_saved_and_a_one_message_session(service: ShiroService, fake: FakeProvider) -> None:
    ws = service.workspaces.pick(None)
    empty = service.new_session(ws)
    assert service.persistence.goodbye_lines(empty) == NEVER_WRITTEN
    fake.script(Reply(text="all green"))
    saved, _ = await chat(service, "run the tests", sessionId=empty.id)
    await service.persistence.save(saved)
    hint = service.persistence.store.resume_hint(saved.id)
    assert saved.id.startswith(hint) and len(hint) >= 8
    assert service.persistence.goodbye_lines(saved) == (
        'Saved 2 messages: "run the tests"\n\n'
        "Resume it with:\n"
        "  shiro -c                    newest session in this directory\n"
        f"  shiro -r {hint:<18} this session by id"
    )
    one = service.new_session(ws)
    one.messages.append(user("just a question"))
    one.title = "just a question"
    assert service.persistence.goodbye_lines(one).startswith('Saved 1 message: "just a question"\n')



async def test_a_sessions_folder_that_is_a_file_gives_a_clear_reason_not_a_crash(service: ShiroService,
                                                                              shiro_home: Path) -> None:
    session = service.new_session(service.workspaces.pick(None))
    session.messages.append(user("keep me"))
    sessions_dir = shiro_home / "sessions"
    if sessions_dir.exists():
        shutil.rmtree(sessions_dir)
    sessions_dir.parent.mkdir(parents=True, exist_ok=True)
    sessions_dir.write_text("not a folder")
    with pytest.raises(Refused, match="sessions"):
        await service.persistence.save(session)
    logged: list[str] = []
    await service.persistence.flush(logged.append)
    assert any(f"session {session.id} could not be saved" in line for line in logged), logged
    assert sessions_dir.read_text() == "not a folder"  # the user's file is left as it was
