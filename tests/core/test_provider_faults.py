"""Provider faults, the service in-process over the real HTTP fake: each ends in a bounded retry
or a clear error, the transcript keeps what arrived, and the session is saved. The provider runs
with a 1 s read timeout so a stalled stream fails fast (SHIRO_PROVIDER_READ_TIMEOUT), and a short
retry backoff (setting retryBackoff) where the test is about giving up, not about the wait."""

from __future__ import annotations

import json
import socket

import pytest
import pytest_asyncio

from tests.fake_provider import HttpError, Reply
from tests.support.service import service_harness

FAST_RETRIES = {"retryBackoff": 0.01}


@pytest.fixture(autouse=True)
def read_timeout(monkeypatch):
    monkeypatch.setenv("SHIRO_PROVIDER_READ_TIMEOUT", "1")


@pytest_asyncio.fixture
async def h(harness):
    return harness


# A Responses stream opens with four lifecycle events (created, in_progress, output_item.added,
# content_part.added); a fault after event 6 lands once two text deltas have arrived.


def notices(h, result):
    return [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]


async def assert_saved(h, session_id, *texts):
    """The session's record on disk holds every one of `texts` (waiting for the turn's save)."""
    path = h.home / "sessions" / f"{session_id}.json"

    def holds() -> bool:
        try:
            record = json.loads(path.read_bytes())
        except FileNotFoundError:
            return False
        saved = {p.get("text") for m in record["messages"] for p in m["content"]}
        return set(texts) <= saved

    await h.wait_for(holds)


TRANSIENT = {
    "429 retry-after": HttpError(429, "slow down", type="rate_limit_error", retry_after=0.2),
    "429 no retry-after": HttpError(429, "slow down", type="rate_limit_error"),
    "500": HttpError(500, "internal"),
    "502": HttpError(502, "bad gateway", body_text="<html>502 Bad Gateway</html>"),
    "503": HttpError(503, "overloaded"),
}


@pytest.mark.parametrize("name", TRANSIENT)
async def test_transient_status_is_retried(h, name):
    h.fake.script(TRANSIENT[name], Reply(text="fine now"))
    result = await h.chat(f"hello after {name}")
    assert result["status"] == "completed" and result["text"] == "fine now"
    [notice] = notices(h, result)
    assert "retrying in" in notice and "(1/3)" in notice
    assert len(h.fake.requests) == 2
    await assert_saved(h, result["sessionId"], f"hello after {name}", "fine now")


@pytest.mark.parametrize("name", ["429 no retry-after", "502"])
async def test_persistent_status_gives_up_after_three_retries(h, name):
    h.service.update_settings(FAST_RETRIES)
    h.fake.script(*[TRANSIENT[name]] * 4)
    result = await h.chat("hello")
    assert result["status"] == "error" and result["error"].startswith(name[:3])
    assert len(h.fake.requests) == 4 and len(notices(h, result)) == 3
    await assert_saved(h, result["sessionId"], "hello")


async def test_connection_refused_is_retried_then_a_clear_error(shiro_home, workspace, fake):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with service_harness(fake, shiro_home, workspace, **FAST_RETRIES) as h:
        h.service.update_settings({"baseUrl": f"http://127.0.0.1:{port}/v1"})
        result = await h.chat("anyone there?")
        assert result["status"] == "error" and result["error"].startswith("could not reach the provider")
        assert len(notices(h, result)) == 3
        await assert_saved(h, result["sessionId"], "anyone there?")
        # The server keeps serving.
        assert (await h.command("shiro.status"))["sessionId"] == result["sessionId"]


async def test_reset_mid_stream_keeps_what_arrived(h):
    h.fake.script(Reply(text="alpha beta gamma delta epsilon", chunks=5, break_after=6))
    result = await h.chat("stream please")
    assert result["status"] == "error" and "could not reach the provider" in result["error"]
    assert result["text"] and "alpha beta gamma delta epsilon".startswith(result["text"])
    assert len(h.fake.requests) == 1  # output had started: not retried (it would be sent twice)
    await assert_saved(h, result["sessionId"], result["text"])


# A stream that breaks after two text deltas: the fake's fault, and the error the turn ends with.
MID_STREAM = {
    "invalid sse": ({"garbage_after": 6}, "malformed stream event"),
    "stall": ({"hang_after": 6}, "sent nothing for 1 s (read timeout)"),
}
# The same faults before any output: retried.
BEFORE_OUTPUT = {
    "invalid sse": ({"garbage_after": 0}, "malformed stream event"),
    "stall": ({"hang_after": 0}, "read timeout"),
}


@pytest.mark.parametrize("name", MID_STREAM)
async def test_fault_mid_stream_is_a_clear_error_and_keeps_the_text(h, name):
    fault, error = MID_STREAM[name]
    h.fake.script(Reply(text="first words then silence", chunks=4, **fault))
    result = await h.chat("stream please")
    assert result["status"] == "error" and error in result["error"]
    assert result["text"] and "first words then silence".startswith(result["text"])
    await assert_saved(h, result["sessionId"], result["text"])
    h.fake.script(Reply(text="back"))
    assert (await h.chat("still there?"))["status"] == "completed"


@pytest.mark.parametrize("name", BEFORE_OUTPUT)
async def test_fault_before_output_is_retried(h, name):
    fault, error = BEFORE_OUTPUT[name]
    h.fake.script(Reply(text="lost", **fault), Reply(text="second try"))
    result = await h.chat("hello")
    assert result["status"] == "completed" and result["text"] == "second try"
    assert error in notices(h, result)[0]


async def test_very_slow_stream_is_not_cut(h):
    text = " ".join(f"word{i}" for i in range(10))
    # 3 s in all (three read timeouts), never more than 0.3 s silent: a margin for a loaded
    # machine under the 1 s timeout.
    h.fake.script(Reply(text=text, chunks=10, delay=0.3))
    result = await h.chat("take your time")
    assert result["status"] == "completed" and result["text"] == text
    deltas = [e for e in h.of_turn(result["turnId"]) if e["type"] == "text_delta"]
    assert len(deltas) >= 4  # it streamed, rather than arriving at the end
