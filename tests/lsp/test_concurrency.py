"""Four servers on one workspace and one home at once: memory (remember), todos (todo_write),
sessions (new, save, list) and prompt history, for 8 s ($SHIRO_SOAK_S seconds if set; 60 s with
SHIRO_FULL_FAULTS=1). Nothing any of them wrote is lost, and every file parses afterwards. Its
worker runs it alone of the heavy tests (xdist_group "heavy")."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from shiro_neko.state.session_store import SessionStore
from tests.fake_provider import Call, Reply
from tests.support.lsp import server_env, start_client
from tests.lsp.state_files import every_state_file_parses

SERVERS = 4
# Eight seconds is dozens of writes of each kind from each server, interleaved; a longer soak is
# for SHIRO_FULL_FAULTS=1 or SHIRO_SOAK_S (docs/reliability.md).
DURATION_S = float(os.environ.get("SHIRO_SOAK_S") or (60.0 if os.environ.get("SHIRO_FULL_FAULTS") == "1" else 8.0))
pytestmark = pytest.mark.xdist_group("heavy")
# Below the stores' caps (300 memory entries, 200 history prompts), so that every write must stay.
MAX_NOTES_PER_SERVER = 70
MAX_CHATS_PER_SERVER = 45
CHATS_PER_SESSION = 5


def respond(req):
    """The model: for a prompt, one todo_write naming it, then an answer naming it."""
    items = req.body["input"]
    # The last prompt: context messages (server/agent/context_messages.py) are user items too.
    last_user = max(i for i, item in enumerate(items) if item.get("role") == "user" and not item["content"][0]["text"].startswith("<"))
    prompt = items[last_user]["content"][0]["text"]
    if any(item.get("type") == "function_call_output" for item in items[last_user:]):
        return Reply(text=f"done: {prompt}")
    return Reply(calls=[Call("todo_write", {"todos": [{"content": prompt, "status": "in_progress"}]})])


async def test_four_servers_lose_nothing(tmp_path, fake, workspace, capsys):
    home = tmp_path / "home"
    fake.script(*[respond] * (SERVERS * MAX_CHATS_PER_SERVER * 2 + 20))
    servers = [
        await start_client({"fake": fake, "home": home, "root": workspace}, "visual-studio-code" if n % 2 else "neovim",
                           server_env(home, fake.base_url), init_options={"approvals": "auto"})
        for n in range(SERVERS)
    ]
    noted: list[str] = []
    prompted: dict[int, list[str]] = {n: [] for n in range(SERVERS)}
    todos: dict[str, str] = {}  # session -> the last todo written in it
    reads = 0

    async def work(n: int, h) -> None:
        nonlocal reads
        deadline = time.monotonic() + DURATION_S
        i = 0
        while time.monotonic() < deadline:
            if i < MAX_NOTES_PER_SERVER:
                text = f"server {n} note {i}"
                await h.command("shiro.remember", {"kind": "fact", "text": text})
                noted.append(text)
            if i < MAX_CHATS_PER_SERVER:
                if i and i % CHATS_PER_SESSION == 0:
                    await h.command("shiro.newSession")
                prompt = f"server {n} chat {i}"
                result = await h.chat(prompt)
                assert result["status"] == "completed" and result["text"] == f"done: {prompt}", result
                prompted[n].append(prompt)
                todos[result["sessionId"]] = prompt
                await h.command("shiro.save")
            listed = await h.command("shiro.sessions")
            history = await h.command("shiro.history")
            notes = await h.command("shiro.notes")
            assert listed["sessions"] and isinstance(history["prompts"], list) and notes["entries"]
            reads += 3
            i += 1

    try:
        await asyncio.gather(*(work(n, h) for n, h in enumerate(servers)))
        # Every server sees everything every other one wrote.
        for h in servers:
            notes = [e["text"] for e in (await h.command("shiro.notes"))["entries"]]
            assert sorted(notes) == sorted(noted), "a remembered note was lost"
            prompts = (await h.command("shiro.history"))["prompts"]
            assert sorted(prompts) == sorted(p for ps in prompted.values() for p in ps), "a prompt was lost"
            for n, own in prompted.items():  # each server's prompts keep their order
                assert [p for p in prompts if p.startswith(f"server {n} ")] == own
            listed = {s["id"] for s in (await h.command("shiro.sessions", {"limit": 1000}))["sessions"]}
            assert listed == set(todos), "a session is missing from a listing"
    finally:
        for h in servers:
            await h.client.shutdown_session()
            await h.client.stop()
    store = SessionStore(home)
    for session_id, last in todos.items():
        record = store.load(session_id)
        assert [t.content for t in record.notebook.todos] == [last], "a todo update was lost"
        dialogue = [m for m in record.messages if not getattr(m, "context", False)]
        assert len(dialogue) % 4 == 0 and record.messages[-1].content[0].text == f"done: {last}"
    checked = every_state_file_parses(home)
    assert not fake.rejections
    chats = sum(len(p) for p in prompted.values())
    with capsys.disabled():
        print(f"\nconcurrency: {SERVERS} servers for {DURATION_S:.0f} s: {len(noted)} notes, {chats} chats in "
              f"{len(todos)} sessions, {reads} reads; nothing lost, {checked} state files parse")
