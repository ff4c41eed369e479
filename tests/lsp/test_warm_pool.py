"""The test servers forked from the test process's warm server (tests/support/warm_pool.py) are
each the test's own: its environment, its state home, its directory."""

from __future__ import annotations

import pytest

from tests.fake_provider import Reply
from tests.support import warm_pool
from tests.support.lsp import start_server, stop


@pytest.mark.skipif(not warm_pool.enabled(), reason="SHIRO_TEST_COLD=1: every server is spawned cold")
async def test_each_forked_server_has_its_own_home_and_environment(tmp_path, fake, workspace):
    trace_a, trace_b = tmp_path / "a.trace", tmp_path / "b.trace"
    a = await start_server(tmp_path / "a", fake, workspace, env={"SHIRO_TRACE": str(trace_a), "SHIRO_MODEL": "model-a"})
    b = await start_server(tmp_path / "b", fake, workspace, env={"SHIRO_TRACE": str(trace_b), "SHIRO_MODEL": "model-b"})
    try:
        fake.script(Reply(text="from a"), Reply(text="from b"))
        first = await a.chat("hello a")
        second = await b.chat("hello b")
    finally:
        await stop(a)
        await stop(b)
    # Forked (the warm child's trace mark), not spawned: the pool is in use...
    assert "warm-child" in trace_a.read_text() and "warm-child" in trace_b.read_text()
    # ...and each took its own environment and state home, not the warm server's.
    assert [r.body["model"] for r in fake.main_requests] == ["model-a", "model-b"]
    assert (tmp_path / "a" / "home" / "sessions" / f"{first['sessionId']}.json").exists()
    assert (tmp_path / "b" / "home" / "sessions" / f"{second['sessionId']}.json").exists()
    assert not (tmp_path / "a" / "home" / "sessions" / f"{second['sessionId']}.json").exists()
