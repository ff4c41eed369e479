"""Load: six sessions in three folders streaming at once on one server. It keeps answering
`shiro.status` for any of them while they stream, every turn completes, and its memory stays
bounded across rounds. (How fast status answers is measured in bench/load.py.)"""

from __future__ import annotations

import os

from tests.lsp.load_scenario import FOLDERS, SESSIONS_PER_FOLDER, run_load
import pytest

# Not side by side with the other heavy tests (Chromium, the soaks): see pyproject.toml.
pytestmark = pytest.mark.xdist_group("heavy")

ROUNDS = 8 if os.environ.get("SHIRO_FULL_FAULTS") == "1" else 3


async def test_six_streaming_sessions_stay_responsive_and_bounded(tmp_path, capsys):
    run = await run_load(tmp_path, ROUNDS)
    assert run.turns == ROUNDS * FOLDERS * SESSIONS_PER_FOLDER
    assert len(run.status_ms) >= 10 * ROUNDS  # status was answered over and over while they streamed
    assert run.deltas >= run.turns * 20  # and they did stream
    growth_mb = (run.rss_kb[-1] - run.rss_kb[0]) / 1024
    # Transcripts grow a little each round; a leak of streamed text would be ~MBs per round.
    assert growth_mb < 25, f"resident memory grew {growth_mb:.1f} MB over {ROUNDS - 1} rounds: {run.rss_kb}"
    with capsys.disabled():
        print(f"\nload: {run.turns} turns, {len(run.status_ms)} status answers while streaming, "
              f"RSS {run.rss_kb[0] // 1024}->{run.rss_kb[-1] // 1024} MB")
