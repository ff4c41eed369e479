"""Issue 39, "model, effort, endpoint and key where the user is", through the real server over
stdio against the HTTP fake provider: `shiro.models`, `shiro.setModel` changing the next request's
`model` and reasoning effort on both wire APIs, and `shiro.setCredentials`'s key reaching the
Authorization header of the next request but never the disk, the log or a command's environment.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import start_client, server_env, stop

KEY = "sk-handed-over-0123456789abcdef"


def _effort(body: dict, api: str) -> str | None:
    return (body.get("reasoning") or {}).get("effort") if api == "responses" else body.get("reasoning_effort")


@pytest.mark.parametrize("api", ["responses", "chat"])
async def test_set_model_and_effort_change_the_next_request(tmp_path: Path, fake: FakeProvider, workspace: Path, api: str) -> None:
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url), settings={"wireApi": api})
    try:
        fake.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
        first = await h.chat("first")
        sid = first["sessionId"]
        assert await h.command("shiro.setModel", {"sessionId": sid, "model": "fake-model-2", "effort": "high"}) == {
            "model": "fake-model-2", "effort": "high"}
        await h.chat("second", sessionId=sid)
        status = await h.command("shiro.status", {"sessionId": sid})
        assert (status["model"], status["effort"]) == ("fake-model-2", "high")
        await h.command("shiro.save", {"sessionId": sid})
        record = json.loads((home / "sessions" / f"{sid}.json").read_text())
        assert (record["model"], record["reasoningEffort"]) == ("fake-model-2", "high")
        assert await h.command("shiro.setModel", {"sessionId": sid, "model": "default", "effort": "default"}) == {
            "model": "gpt-5", "effort": None}
        await h.chat("third", sessionId=sid)
        bodies = [r.body for r in fake.requests if r.api == api]
        assert [b["model"] for b in bodies] == ["gpt-5", "fake-model-2", "gpt-5"]
        assert [_effort(b, api) for b in bodies] == [None, "high", None]
    finally:
        await stop(h)


async def test_set_model_refuses_what_is_not_a_model_id(harness) -> None:
    with pytest.raises(Exception, match="not a model id"):
        await harness.command("shiro.setModel", {"model": "gpt\n-5"})
    with pytest.raises(Exception, match="unknown effort"):
        await harness.command("shiro.setModel", {"effort": "max"})


async def test_models_lists_the_endpoint_then_the_settings(tmp_path: Path, fake: FakeProvider, workspace: Path) -> None:
    fake.models = ["m-b", "m-a", "bad\x00id", ""]
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url), settings={"model": "m-a", "models": ["mine"]})
    try:
        result = await h.command("shiro.models")
        assert result["models"] == [
            {"id": "m-a", "source": "endpoint"}, {"id": "m-b", "source": "endpoint"}, {"id": "mine", "source": "settings"}]
        assert result["current"] == "m-a" and "error" not in result
        fake.models = ["m-c"]
        assert [m["id"] for m in (await h.command("shiro.models"))["models"]] == ["m-a", "m-b", "mine"]  # cached
        assert [m["id"] for m in (await h.command("shiro.models", {"refresh": True}))["models"]] == ["m-c", "m-a", "mine"]
    finally:
        await stop(h)


async def test_set_credentials_key_reaches_the_header_not_the_disk_log_or_commands(
        tmp_path: Path, fake: FakeProvider, workspace: Path, capfd: pytest.CaptureFixture[str]) -> None:
    fake.api_key = KEY
    home = tmp_path / "home"
    env = server_env(home, None, api_key=None, SHIRO_LOG="DEBUG")
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code", env,
                           settings={"approvals": "auto", "sandbox": "off"}, cold=True)
    try:
        missing = await h.chat("hello?")
        assert missing["status"] == "error" and "Set up model" in missing["error"], missing
        assert fake.requests == []
        # A wrong key first: the endpoint's 401 names the action too, and the list is refused.
        assert (await h.command("shiro.setCredentials", {"baseUrl": fake.base_url, "apiKey": "sk-wrong-key-000000"}))["ok"]
        assert "refused the key" in (await h.command("shiro.models"))["error"]
        wrong = await h.chat("hello again?")
        assert wrong["status"] == "error" and "401" in wrong["error"] and "Set up model" in wrong["error"], wrong
        answer = await h.command("shiro.setCredentials", {"apiKey": KEY, "model": "fake-model"})
        assert answer == {"ok": True, "model": "fake-model", "baseUrl": fake.base_url}
        assert [m["id"] for m in (await h.command("shiro.models"))["models"]][0] == "fake-model"
        fake.script(Reply(calls=[Call("run_command", {"command": "env; cat /proc/$PPID/environ | tr '\\0' '\\n'"})]),
                    Reply(text="done"))
        done = await h.chat("print the environment")
        assert done["status"] == "completed", done
        assert [r.headers["authorization"] for r in fake.requests] == [f"Bearer {KEY}"] * 2
        assert fake.requests[0].body["model"] == "fake-model"
        output = next(e for e in h.events if e["type"] == "tool_result")["output"]
        assert "PATH=" in output and KEY not in output  # the command ran, without the key
        await h.command("shiro.save", {"sessionId": done["sessionId"]})
        assert (await h.command("shiro.setCredentials", {"apiKey": ""}))["ok"]
        forgotten = await h.chat("and now?")  # the endpoint's placeholder key, refused
        assert forgotten["status"] == "error" and "401" in forgotten["error"], forgotten
        assert fake.unauthorized[-1].headers["authorization"] == "Bearer sk-no-key-required"
    finally:
        await stop(h)
    on_disk = [p for p in home.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert on_disk == [] and any(home.rglob("*.json"))
    log = capfd.readouterr().err
    assert "shiro-lsp DEBUG" in log and KEY not in log and KEY[:-4] not in log


async def test_set_credentials_refuses_a_bad_url_or_key(harness) -> None:
    with pytest.raises(Exception, match="not an endpoint URL"):
        await harness.command("shiro.setCredentials", {"baseUrl": "file:///etc/passwd"})
    with pytest.raises(Exception, match="spaces or control characters"):
        await harness.command("shiro.setCredentials", {"apiKey": "sk-abc\r\nX-Evil: 1"})
    assert os.environ.get("OPENAI_API_KEY") != "sk-abc"


async def test_a_model_the_endpoint_lacks_says_so_and_is_no_missing_responses_api(tmp_path: Path, fake: FakeProvider, workspace: Path) -> None:
    """An Ollama-like endpoint without the default model: its 404 named the model, yet with
    `wireApi: auto` it read as "no Responses API" and the session moved to Chat Completions for good."""
    fake.strict_models = True
    fake.models = ["fake-model"]
    home = tmp_path / "home"
    h = await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
                           server_env(home, fake.base_url), settings={"wireApi": "auto"})
    try:
        fake.script(Reply(text="answered by fake-model"))
        failed = await h.chat("hello")
        assert failed["status"] == "error", failed
        assert "The model `gpt-5` does not exist" in failed["error"] and "/model lists the ones it has" in failed["error"], failed
        assert not any("Responses API" in json.dumps(e) for e in h.events), h.events
        sid = failed["sessionId"]
        await h.command("shiro.setModel", {"sessionId": sid, "model": "fake-model"})
        answered = await h.chat("hello again", sessionId=sid)
        assert answered["status"] != "error", answered
        # One refused request (no retry on Chat Completions), then the Responses API with the model picked.
        assert [(r.api, r.body["model"]) for r in fake.requests] == [("responses", "gpt-5"), ("responses", "fake-model")]
        assert [(r.api, r.body["model"]) for r in fake.rejections] == [("responses", "gpt-5")]
    finally:
        await stop(h)
