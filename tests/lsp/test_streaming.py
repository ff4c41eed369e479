"""10,000 streamed deltas reach the client as the complete text, in order, whether it keeps up or
falls behind (then the server joins deltas while its write is pending: server/delta_coalescing.py,
server/lsp/pipe_writer.py)."""

from __future__ import annotations

import time
from typing import Any, AsyncIterator

import pytest_asyncio

from tests.fake_provider import Reply
from tests.support.lsp import Harness, server_env, start_client

DELTAS = 10_000
TEXT = "".join(f"{i:05d} " for i in range(DELTAS))  # every piece says where it belongs


@pytest_asyncio.fixture
async def vscode(tmp_path: Any, fake: Any, workspace: Any) -> AsyncIterator[Harness]:
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url))
    yield h
    await h.client.shutdown_session()
    await h.client.stop()


def streamed(h: Harness, turn_id: str) -> list[str]:
    return [e["text"] for e in h.of_turn(turn_id) if e["type"] == "text_delta"]


async def test_ten_thousand_deltas_arrive_complete_and_in_order(vscode: Harness) -> None:
    vscode.fake.script(Reply(text=TEXT, chunks=DELTAS))
    result = await vscode.chat("stream a lot")
    assert result["status"] == "completed"
    pieces = streamed(vscode, result["turnId"])
    assert "".join(pieces) == TEXT
    assert vscode.types_of(result["turnId"])[-1] == "turn_end"


async def test_a_client_that_falls_behind_gets_joined_deltas_and_loses_nothing(vscode: Harness) -> None:
    class StallOnFirstDelta(list):  # the harness appends each event here, on the client's loop
        stalled = False

        def append(self, event: Any) -> None:
            super().append(event)
            if event["type"] == "text_delta" and not self.stalled:
                self.stalled = True
                time.sleep(1.5)  # this client stops reading: the server's pipe fills, its writes pend

    vscode.events = StallOnFirstDelta()
    vscode.fake.script(Reply(text=TEXT, chunks=DELTAS))
    result = await vscode.chat("stream a lot")
    assert result["status"] == "completed"
    pieces = streamed(vscode, result["turnId"])
    assert "".join(pieces) == TEXT
    assert len(pieces) < DELTAS  # some were joined while the client was not reading
    kinds = vscode.types_of(result["turnId"])
    assert kinds[0] == "turn_start" and kinds[-1] == "turn_end"
