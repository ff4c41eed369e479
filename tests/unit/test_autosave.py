"""Autosave scheduling (features/sessions.py) on a real event loop and a real store: a stream of
changes closer than the 400 ms debounce is saved at least every 2 s (the ceiling), not at every
change; when changes stop, one trailing save follows; a turn's end saves at once.

Saves are seen as new inodes of the record file. Bounds are generous (the machine is shared);
lower bounds (never earlier than the rule allows) cannot flake.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from shiro_neko.model.transcript import TextPart, UserMessage
from shiro_neko.config import Settings
from shiro_neko.features.sessions import DEBOUNCE_S, MAX_GAP_S, SessionsFeature
from shiro_neko.session_registry import SessionRegistry
from shiro_neko.workspaces import Workspaces
from tests.support.scripted import make_session


@pytest.fixture
def feature(shiro_home: Path) -> SessionsFeature:
    # The feature gets what it needs, not the service: a registry of open sessions and settings.
    def unused(*args: object) -> object:
        raise AssertionError("autosave never resumes, opens or says goodbye")

    return SessionsFeature(SessionRegistry(Workspaces()), Settings, unused, unused, unused)  # type: ignore[arg-type]


async def _watch(path: Path, saves: list[float], stop: asyncio.Event) -> None:
    last = None
    while not stop.is_set():
        try:
            ino = os.stat(path).st_ino
            if ino != last:
                saves.append(time.monotonic())
                last = ino
        except FileNotFoundError:
            pass
        await asyncio.sleep(0.005)


async def test_ceiling_while_changes_stream_then_trailing_save_then_turn_end(tmp_path: Path, feature: SessionsFeature) -> None:
    session = make_session(tmp_path, settings=Settings(), session_id="0193ab2c-0000-7000-8000-000000000001")
    path = feature.store.path(session.id)
    saves: list[float] = []
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(_watch(path, saves, stop))
    try:
        start = time.monotonic()
        changes = 0
        while time.monotonic() - start < 5.0:  # a change every 100 ms for 5 s
            session.messages.append(UserMessage(content=[TextPart(text=f"step {changes}")]))
            feature.changed(session, False)
            changes += 1
            await asyncio.sleep(0.1)
        streaming_end = last_change = time.monotonic()
        await asyncio.sleep(1.5)
        during = [t for t in saves if t < streaming_end]
        trailing = [t for t in saves if t >= streaming_end]
        assert 2 <= len(during) <= changes // 3, (len(during), changes)  # the ceiling, not every change
        gaps = [b - a for a, b in zip([start, *during], [*during, streaming_end])]
        assert max(gaps) <= MAX_GAP_S + 1.5, gaps
        assert all(g >= DEBOUNCE_S for g in gaps[1:-1]), gaps
        assert len(trailing) == 1 and trailing[0] >= last_change  # one trailing save after the last change
        session.messages.append(UserMessage(content=[TextPart(text="turn over")]))
        ended = time.monotonic()
        feature.changed(session, True)
        deadline = ended + 1.0
        while len(saves) == len(during) + 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert len(saves) == len(during) + 2 and saves[-1] <= ended + 1.0  # the turn's end saves at once
        assert feature.store.load(session.id).messages[-1] == session.messages[-1]
    finally:
        stop.set()
        await watcher
        feature._writer.shutdown(wait=True)
