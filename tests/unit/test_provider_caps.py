"""Bounded provider responses and a sane Retry-After, on the service with the real HTTP fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_neko.agent.provider.openai_provider import MAX_RETRY_AFTER_S, parse_retry_after
from tests.fake_provider import FakeProvider, HttpError, Reply
from tests.support.service import chat, running_service

CAP = 64 * 1024


async def test_a_response_past_its_cap_ends_the_turn_and_nothing_past_it_is_kept(
    shiro_home: Path, fake: FakeProvider, workspace: Path
) -> None:
    fake.script(Reply(text="y" * (CAP * 8), chunks=200))  # an endless stream, as far as the cap goes
    async with running_service(fake, workspace, maxResponseBytes=CAP) as service:
        _, outcome = await chat(service, "talk")
        assert outcome.status == "error" and "maxResponseBytes" in (outcome.error or "")
    saved = [p.stat().st_size for p in (shiro_home / "sessions").glob("*.json")]
    assert saved and max(saved) < CAP  # what arrived before the cap at most, never the rest


async def test_one_huge_event_is_refused_before_it_is_buffered(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    fake.script(Reply(text="z" * (CAP * 4), chunks=1))  # one SSE event holding it all
    async with running_service(fake, workspace, maxEventBytes=CAP) as service:
        _, outcome = await chat(service, "talk")
        assert outcome.status == "error" and "maxEventBytes" in (outcome.error or "")
        assert len(fake.requests) == 1  # not retried: the same answer would come again


async def test_under_the_caps_nothing_changes(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    fake.script(Reply(text="w" * (CAP // 2), chunks=20))
    async with running_service(fake, workspace, maxEventBytes=CAP, maxResponseBytes=CAP * 4) as service:
        _, outcome = await chat(service, "talk")
        assert outcome.status == "completed" and outcome.text == "w" * (CAP // 2)


@pytest.mark.parametrize("raw, expected", [
    ("2", 2.0), ("0", 0.0), ("1e9", MAX_RETRY_AFTER_S), ("-5", None), ("abc", None), ("nan", None), ("", None),
    (None, None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
])
def test_retry_after_is_clamped_and_garbage_ignored(raw: str | None, expected: float | None) -> None:
    assert parse_retry_after(raw) == expected


async def test_a_negative_retry_after_falls_back_to_the_backoff(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    fake.script(HttpError(429, "slow down", retry_after=-5), Reply(text="fine"))
    async with running_service(fake, workspace) as service:
        _, outcome = await chat(service, "go")
        notices = [e["message"] for e in service.bridge.sink.events if e["type"] == "notice"]  # type: ignore[attr-defined]
    assert outcome.status == "completed"
    assert any("retrying in 0." in n for n in notices) and not any("-4" in n for n in notices), notices
