"""The API key never lands on disk, in the log or in a notification.

A run with a marker key goes through tools (a command that tries to print the key), a 401 whose
message echoes the key back, memory, todos, saves and shutdown, with the server logging at DEBUG;
then every file under SHIRO_NEKO_HOME, the server's stderr and everything the client received are
searched for the key and for its tail (a provider may echo a masked key)."""

from __future__ import annotations

import json
import uuid

from tests.fake_provider import Call, HttpError, Reply
from tests.support.lsp import server_env, start_client


async def test_api_key_is_in_no_file_log_or_notification(tmp_path, fake, workspace, capfd):
    key = f"sk-shiro-marker-{uuid.uuid4().hex}"
    home = tmp_path / "home"
    h = await start_client(
        {"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
        server_env(home, fake.base_url, api_key=key, SHIRO_LOG="DEBUG"),
        init_options={"approvals": "auto", "sandbox": "off"},
    )
    received = []
    try:
        fake.script(
            Reply(calls=[Call("run_command", {"command": "env; echo key=$OPENAI_API_KEY"}),
                         Call("todo_write", {"todos": [{"content": "keep secrets", "status": "in_progress"}]}),
                         Call("remember", {"kind": "fact", "text": "the user likes short answers"})]),
            Reply(text="ran it"),
            HttpError(401, f"Incorrect API key provided: {key}. You can find your API key in your account.",
                      type="invalid_request_error", code="invalid_api_key"),
            Reply(text="fine again"),
        )
        received.append(await h.chat("show me the environment"))
        failed = await h.chat("again")
        assert failed["status"] == "error" and "Incorrect API key provided" in failed["error"]
        received.append(failed)
        received.append(await h.chat("once more"))
        received.append(await h.command("shiro.save"))
        received.append(await h.command("shiro.status"))
        received.append(await h.command("shiro.sessions"))
        tools = [e for e in h.events if e["type"] == "tool_result"]
        assert "key=\n" in tools[0]["output"]  # the command ran, without the server's key
    finally:
        await h.client.shutdown_session()
        await h.client.stop()

    # The key was really in use: the provider saw it on every request.
    assert fake.requests and all(r.headers["authorization"] == f"Bearer {key}" for r in fake.requests)
    stderr = capfd.readouterr().err
    assert "DEBUG" in stderr  # the log was on, and verbose
    places = {f"file {p}": p.read_bytes().decode("utf-8", "replace") for p in home.rglob("*") if p.is_file()}
    assert any("sessions" in name for name in places)
    places["server stderr"] = stderr
    places["notifications"] = json.dumps([h.events, h.statuses, h.todos])
    places["logMessage"] = json.dumps([m.message for m in h.client.log_messages])
    places["showMessage"] = json.dumps([m.message for m in h.client.messages])
    places["results"] = json.dumps(received)
    leaks = [name for name, text in places.items() if key in text or key[-12:] in text or f"Bearer {key}" in text]
    assert not leaks, f"the API key appears in: {leaks}"
