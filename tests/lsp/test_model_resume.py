"""A session's own model and effort (`shiro.setModel`) survive a resume in a new server, through
the real server over stdio against the HTTP fake provider: the record keeps the user's choice
(`modelOverride` / `effortOverride`) apart from the model in use, a session without one follows
the `model` setting as it is now, and a hand-edited record's bad choice is dropped with a notice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_provider import FakeProvider, Reply
from tests.support.lsp import Harness, start_server, stop


def _effort(body: dict[str, Any], api: str) -> str | None:
    return (body.get("reasoning") or {}).get("effort") if api == "responses" else body.get("reasoning_effort")


def _record(home: Path, session_id: str) -> dict[str, Any]:
    return json.loads((home / "sessions" / f"{session_id}.json").read_text())


async def _server(tmp_path: Path, fake: FakeProvider, workspace: Path, settings: dict[str, Any]) -> Harness:
    return await start_server(tmp_path, fake, workspace, settings=settings)


async def _resume_and_chat(h: Harness, session_id: str, api: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Resume `session_id`, then one turn in it: its status after the resume and that turn's request."""
    assert (await h.command("shiro.resume", {"id": session_id}))["sessionId"] == session_id
    status = await h.command("shiro.status", {"sessionId": session_id})
    h.fake.script(Reply(text="again"))
    await h.chat("go on", sessionId=session_id)
    return status, [r.body for r in h.fake.requests if r.api == api][-1]


@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_a_picked_model_and_effort_come_back_and_an_unpicked_session_follows_the_setting(
        tmp_path: Path, fake: FakeProvider, workspace: Path, api: str) -> None:
    home = tmp_path / "home"
    h = await _server(tmp_path, fake, workspace, {"wireApi": api, "model": "gpt-5"})
    try:
        fake.script(Reply(text="one"), Reply(text="two"))
        picked = (await h.chat("first"))["sessionId"]
        result = await h.command("shiro.setModel", {"sessionId": picked, "model": "fake-model-2", "effort": "high"})
        assert result == {"model": "fake-model-2", "effort": "high"}
        await h.command("shiro.newSession")
        plain = (await h.chat("second"))["sessionId"]
        assert plain != picked
        await h.command("shiro.save", {"sessionId": picked})
        await h.command("shiro.save", {"sessionId": plain})
    finally:
        await stop(h)
    record = _record(home, picked)
    assert (record["modelOverride"], record["effortOverride"]) == ("fake-model-2", "high")
    assert "modelOverride" not in _record(home, plain) and "effortOverride" not in _record(home, plain)

    # A new server on the same home, the `model` setting changed meanwhile.
    h = await _server(tmp_path, fake, workspace, {"wireApi": api, "model": "gpt-5-mini"})
    try:
        status, body = await _resume_and_chat(h, picked, api)
        assert (status["model"], status["effort"]) == ("fake-model-2", "high")
        assert (body["model"], _effort(body, api)) == ("fake-model-2", "high")

        status, body = await _resume_and_chat(h, plain, api)  # never picked one: the setting as it is now
        assert (status["model"], status["effort"]) == ("gpt-5-mini", None)
        assert (body["model"], _effort(body, api)) == ("gpt-5-mini", None)

        # "default" clears the choice: the record follows the setting from then on.
        await h.command("shiro.setModel", {"sessionId": picked, "model": "default", "effort": "default"})
        await h.command("shiro.save", {"sessionId": picked})
    finally:
        await stop(h)
    record = _record(home, picked)
    assert "modelOverride" not in record and "effortOverride" not in record and record["model"] == "gpt-5-mini"

    h = await _server(tmp_path, fake, workspace, {"wireApi": api, "model": "gpt-5-nano"})
    try:
        status, body = await _resume_and_chat(h, picked, api)
        assert (body["model"], _effort(body, api)) == ("gpt-5-nano", None)
    finally:
        await stop(h)


async def test_an_effort_alone_comes_back(tmp_path: Path, fake: FakeProvider, workspace: Path) -> None:
    """`shiro.effort` is a choice too: the resumed session keeps it and the `model` setting."""
    h = await _server(tmp_path, fake, workspace, {"model": "gpt-5"})
    try:
        fake.script(Reply(text="one"))
        sid = (await h.chat("first"))["sessionId"]
        await h.command("shiro.effort", {"sessionId": sid, "effort": "low"})
        await h.command("shiro.save", {"sessionId": sid})
    finally:
        await stop(h)
    h = await _server(tmp_path, fake, workspace, {"model": "gpt-5-mini"})
    try:
        status, body = await _resume_and_chat(h, sid, "responses")
        assert (status["model"], status["effort"]) == ("gpt-5-mini", "low")
        assert (body["model"], _effort(body, "responses")) == ("gpt-5-mini", "low")
    finally:
        await stop(h)


@pytest.mark.parametrize("model, effort", [("gpt\n-5", "max"), ("fake\u202e-model", "high; rm -rf"), ("", "")])
async def test_a_bad_choice_in_a_hand_edited_record_is_dropped_with_a_notice(
        tmp_path: Path, fake: FakeProvider, workspace: Path, model: str, effort: str) -> None:
    home = tmp_path / "home"
    h = await _server(tmp_path, fake, workspace, {"model": "gpt-5"})
    try:
        fake.script(Reply(text="one"))
        sid = (await h.chat("first"))["sessionId"]
        await h.command("shiro.save", {"sessionId": sid})
    finally:
        await stop(h)
    path = home / "sessions" / f"{sid}.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "modelOverride": model, "effortOverride": effort}))

    h = await _server(tmp_path, fake, workspace, {"model": "gpt-5-mini"})
    try:
        status, body = await _resume_and_chat(h, sid, "responses")
        assert (status["model"], status["effort"]) == ("gpt-5-mini", None)
        assert (body["model"], _effort(body, "responses")) == ("gpt-5-mini", None)
        notices = [e["message"] for e in h.events if e.get("type") == "notice" and e.get("sessionId") == sid]
        dropped = [n for n in notices if "dropped this session's saved model" in n]
        assert len(dropped) == 1 and "and effort" in dropped[0] and "/model" in dropped[0], notices
        assert "\n" not in dropped[0] and "\u202e" not in dropped[0]  # named escaped, never as is
        await h.command("shiro.save", {"sessionId": sid})
    finally:
        await stop(h)
    record = json.loads(path.read_text())
    assert "modelOverride" not in record and "effortOverride" not in record  # dropped for good
