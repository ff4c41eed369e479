"""Autosave as docs/state-files.md describes it (end to end; the 2 s ceiling is in tests/unit/test_autosave.py,
where changes can be made closer than 400 ms apart for seconds, which a loaded machine's real
tool loop cannot promise): a trailing 400 ms debounce, at most 2 s between saves while a
turn streams, a save when the turn ends. Saves are seen on disk (each atomic save is a new inode).

Only order and generous bounds are asserted: the machine is shared, so a save may come late, and
lower bounds (a save never *earlier* than the debounce allows) are the ones that cannot flake.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path

from tests.fake_provider import Call, Reply
from tests.support.lsp import start_server, stop


class SaveWatch:
    """Polls one record file in a thread: every new inode is one save (time, message count)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.saves: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        last = None
        while not self._stop.is_set():
            try:
                ino = os.stat(self.path).st_ino
                if ino != last:
                    messages = json.loads(self.path.read_bytes())["messages"]
                    count = len([m for m in messages if not m.get("context")])  # the dialogue, as shown() counts it
                    self.saves.append((time.monotonic(), count))
                    last = ino
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


async def _session_path(h) -> Path:
    await h.wait_for(lambda: any(e["type"] == "turn_start" for e in h.events))
    session_id = next(e["sessionId"] for e in h.events if e["type"] == "turn_start")
    return h.home / "sessions" / f"{session_id}.json"


async def test_a_burst_writes_once_after_the_debounce_and_the_turn_end_saves_at_once(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, init_options={"approvals": "auto"})
    try:
        fake.script(Reply(text="warm"))  # a first turn: the provider client is loaded, the record exists
        await h.chat("warm up")
        arrived: list[float] = []

        def at(reply: Reply):
            def step(req):
                arrived.append(time.monotonic())
                return reply
            return step

        # The model answers after 1 s with a call; the call and its result land a few ms apart
        # (a burst); then 3 s of quiet before the final answer.
        fake.script(at(Reply(think=1.0, calls=[Call("read_file", {"path": "hello.py"})])), at(Reply(think=3.0, text="done")))
        watch = SaveWatch(await _session_path(h))
        await h.wait_for(lambda: any(c == 2 for _, c in watch.saves), timeout=10)
        watch.saves.clear()  # the first turn's own save, seen
        try:
            result = await h.chat("read hello.py")
            ended = time.monotonic()
            assert result["status"] == "completed" and result["text"] == "done"
            await h.wait_for(lambda: watch.saves and watch.saves[-1][1] == 6, timeout=1.0)  # within a second of turn_end
        finally:
            watch.stop()
        saves = watch.saves
        assert [c for _, c in saves] == [3, 5, 6], saves  # the prompt; the burst, written once; the turn end
        reply_at = arrived[0] + 1.0  # the call cannot reach the server before the fake's delay ends
        assert saves[0][0] < reply_at  # the prompt alone, 400 ms after it was sent
        assert saves[1][0] >= reply_at + 0.4  # trailing debounce: 400 ms after the burst, not at it
        assert saves[1][0] < arrived[1] + 3.0  # during the quiet, before the final answer
        assert saves[2][0] >= arrived[1] + 3.0 and saves[2][0] <= ended + 1.0
    finally:
        await h.client.shutdown_session()
        await h.client.stop()
