"""Issue 37: a stable prompt prefix, context messages, cached tokens, reasoning effort and the
context window, in-process on both wire APIs with the real HTTP fake (the server end to end:
tests/lsp/test_prompt_prefix.py)."""

from __future__ import annotations

import json
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import pytest
from pygls.exceptions import JsonRpcException

from tests.fake_provider import Call, FakeProvider, HttpError, RecordedRequest, Reply
from tests.support.lsp import EDIT_FILE_MODEL
from tests.support.service import service_harness

WIRES = ["responses", "chat"]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=root, check=True, capture_output=True)


def make_repo(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "pkg" / "AGENTS.md").write_text("In pkg, run make first.\n")
    (root / "AGENTS.md").write_text("Use tabs, never spaces.\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")


def conversation(req: RecordedRequest) -> list[Any]:
    return req.body["input"] if req.api == "responses" else req.body["messages"]


def static_part(req: RecordedRequest) -> tuple[Any, Any]:
    """What must be byte-identical: the instructions and the tool list."""
    if req.api == "responses":
        return req.body["instructions"], req.body["tools"]
    return req.body["messages"][0], req.body["tools"]


def text_of(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [])


def context_texts(items: list[Any]) -> list[str]:
    return [text_of(i) for i in items if i.get("role") == "user" and text_of(i).startswith("<")]


def session_script() -> list[Reply]:
    todos = [{"content": "change x", "status": "in_progress"}, {"content": "run it", "status": "pending"}]
    return [
        Reply(calls=[Call("read_file", {"path": "hello.py"}, "c1")]),
        Reply(calls=[Call("todo_write", {"todos": todos}, "c2")]),
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "print('hello')", "new_text": "print('bye')"}, "c3")]),
        Reply(calls=[Call("read_file", {"path": "pkg/mod.py"}, "c4")]),
        Reply(calls=[Call("run_command", {"command": "echo ran"}, "c5")]),
        Reply(text="Changed hello.py:1."),
        Reply(text="still fine"),
    ]


@pytest.mark.parametrize("wire", WIRES)
async def test_the_prefix_stays_and_changes_are_appended_as_context(shiro_home, fake, workspace, wire):
    make_repo(workspace)
    async with service_harness(fake, shiro_home, workspace, wireApi=wire, approvals="auto", sandbox="off", model=EDIT_FILE_MODEL) as h:
        fake.script(*session_script())
        first = await h.chat("change hello.py")
        assert first["status"] == "completed", first
        assert (await h.chat("and now?"))["status"] == "completed"
        requests = fake.main_requests
        assert len(requests) == 7 and not fake.rejections
        for before, after in zip(requests, requests[1:]):
            assert static_part(after) == static_part(before)
            # Every earlier item is repeated as it was: only appended to.
            assert conversation(after)[: len(conversation(before))] == conversation(before)
        contexts = context_texts(conversation(requests[-1]))
        # Each change once, where it happened: the start (root AGENTS.md, a clean tree), the task
        # list after todo_write, the edit in git status, pkg/AGENTS.md after reading pkg/mod.py.
        assert contexts[0].startswith("<environment_context>") and "Git status: clean" in contexts[0]
        assert '<project_instructions file="AGENTS.md">\nUse tabs, never spaces.' in contexts[0]
        joined = "\n".join(contexts)
        assert joined.count("[~] change x") == 1 and joined.count(" M hello.py") == 1
        assert joined.count("In pkg, run make first.") == 1
        assert "Git status" not in static_part(requests[0])[0].__str__()
        # The context message after the edit follows the edit's result, never rewrites before it.
        items = conversation(requests[3])
        assert " M hello.py" in text_of(items[-1]) and " M hello.py" not in json.dumps(items[:-1])
        # cached tokens: the fake's prompt cache served the repeated prefix; status and record say so.
        status = (await h.command("shiro.status"))
        assert status["cachedTokens"] > 0 and status["cachedTokens"] < status["inputTokens"]
        await h.command("shiro.save")
        record = json.loads(next((shiro_home / "sessions").glob("*.json")).read_text())
        assert record["cachedTokens"] == status["cachedTokens"]
        # The context messages are the model's: a resumed session shows the prompts only.
        resumed = await h.command("shiro.resume", {"id": first["sessionId"]})
        shown = [m for m in resumed["messages"] if m["role"] == "user"]
        assert [m["content"][0]["text"] for m in shown] == ["change hello.py", "and now?"]


async def test_a_patch_into_a_folder_brings_its_agents_md(shiro_home, fake, workspace):
    """apply_patch (the default model's edit tool) names its files in the patch text: a patch into
    pkg/ makes pkg/AGENTS.md context, as an edit_file there would."""
    make_repo(workspace)
    async with service_harness(fake, shiro_home, workspace, approvals="auto") as h:
        patch = "*** Begin Patch\n*** Add File: pkg/new.py\n+y = 2\n*** End Patch"
        fake.script(Reply(calls=[Call("apply_patch", {"input": patch}, "p1")]), Reply(text="done"))
        assert (await h.chat("add pkg/new.py"))["status"] == "completed"
        after = context_texts(conversation(fake.main_requests[1]))
        assert any('<project_instructions file="pkg/AGENTS.md">' in t for t in after), after


async def test_a_resumed_session_goes_on_from_what_it_said(shiro_home, fake, workspace):
    """The record keeps the context messages: after resume nothing already said is said again,
    and the prefix of the resumed session's first request is the old conversation."""
    make_repo(workspace)
    async with service_harness(fake, shiro_home, workspace) as h:
        fake.script(Reply(text="one"))
        first = await h.chat("hello")
        await h.command("shiro.save")
    async with service_harness(fake, shiro_home, workspace) as h:
        await h.command("shiro.resume", {"id": first["sessionId"]})
        fake.script(Reply(text="two"))
        await h.chat("again")
        before, after = fake.main_requests[-2:]
        assert static_part(after) == static_part(before)
        assert conversation(after)[: len(conversation(before))] == conversation(before)
        # Nothing changed in between: no new context message, only the prompt.
        added = conversation(after)[len(conversation(before)):]
        assert [text_of(i) for i in added if i.get("role") == "user"] == ["again"]


@pytest.mark.parametrize("wire", WIRES)
async def test_reasoning_effort_from_the_command_reaches_the_request(shiro_home, fake, workspace, wire):
    async with service_harness(fake, shiro_home, workspace, wireApi=wire) as h:
        fake.script(Reply(text="a"), Reply(text="b"), Reply(text="c"))
        assert await h.command("shiro.effort") == {"effort": None, "model": "gpt-5"}
        await h.chat("one")
        assert "reasoning" not in fake.requests[-1].body and "reasoning_effort" not in fake.requests[-1].body
        assert (await h.command("shiro.effort", {"effort": "high"}))["effort"] == "high"
        await h.chat("two")
        body = fake.requests[-1].body
        if wire == "responses":
            assert body["reasoning"] == {"effort": "high", "summary": "auto"}
        else:
            assert body["reasoning_effort"] == "high"
        assert h.statuses[-1]["effort"] == "high"
        assert (await h.command("shiro.effort", {"effort": "default"}))["effort"] is None
        await h.chat("three")
        assert "reasoning" not in fake.requests[-1].body and "reasoning_effort" not in fake.requests[-1].body
        with pytest.raises(JsonRpcException) as caught:
            await h.command("shiro.effort", {"effort": "extreme"})
        assert "minimal, low, medium, high" in caught.value.message
        assert not fake.rejections  # the openai SDK's request types took every body


async def test_the_reasoning_effort_setting_and_the_record(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace, reasoningEffort="low") as h:
        fake.script(Reply(text="a"))
        await h.chat("one")
        assert fake.requests[-1].body["reasoning"]["effort"] == "low"
        await h.command("shiro.save")
        record = json.loads(next((shiro_home / "sessions").glob("*.json")).read_text())
        assert record["reasoningEffort"] == "low"


@pytest.mark.parametrize("wire", WIRES)
async def test_an_endpoint_that_refuses_the_effort_gets_requests_without_it(shiro_home, fake, workspace, wire):
    """LiteLLM's proxy answers 400 "fake-model doesn't support `reasoning.effort`" for a model its
    table does not mark as reasoning (seen trying it, docs/prompt.md): the request goes again
    without the effort, once, with a notice, and the session's next requests go without it."""
    async with service_harness(fake, shiro_home, workspace, reasoningEffort="low", wireApi=wire) as h:
        refusal = ("litellm.UnsupportedParamsError: fake-model doesn't support `reasoning.effort` (its model cost map "
                   "entry lacks `supports_reasoning`). To drop unsupported params set `litellm.drop_params = True`")
        fake.script(HttpError(400, refusal, type="invalid_request_error"), Reply(text="a"), Reply(text="b"))
        assert (await h.chat("one"))["status"] == "completed"
        assert (await h.chat("two"))["status"] == "completed"
        first, retry, later = fake.requests
        assert ("reasoning" in first.body) or ("reasoning_effort" in first.body)
        for request in (retry, later):
            assert "reasoning" not in request.body and "reasoning_effort" not in request.body
        assert any("refused the reasoning effort" in e.get("message", "") for e in h.events if e.get("type") == "notice")


class _OllamaFront(BaseHTTPRequestHandler):
    """A local engine as Ollama answers: `/api/show` with a loaded window of 2,048 tokens; the
    OpenAI-compatible `/v1/...` forwarded to the fake provider."""

    fake_url = ""
    shows: list[Any] = []

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path == "/api/show":
            self.shows.append(json.loads(body))
            answer = json.dumps({"parameters": "num_ctx                        2048\nstop \"<|im_end|>\"",
                                 "model_info": {"qwen2.context_length": 32768}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            return
        forwarded = urllib.request.Request(self.fake_url + self.path[len("/v1"):], data=body, method="POST",
                                           headers={"content-type": "application/json", "authorization": self.headers.get("authorization", "")})
        with urllib.request.urlopen(forwarded, timeout=30) as response:  # noqa: S310 - the test's own fake
            data = response.read()
            self.send_response(response.status)
            self.send_header("content-type", response.headers.get("content-type", "text/event-stream"))
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


@pytest.fixture
def ollama(fake: FakeProvider) -> Iterator[str]:
    handler = type("Front", (_OllamaFront,), {"fake_url": fake.base_url, "shows": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


async def test_the_context_window_from_ollama_caps_compaction_and_warns(shiro_home, fake, workspace, ollama):
    async with service_harness(fake, shiro_home, workspace, baseUrl=ollama, model="qwen2.5-coder:7b") as h:
        fake.script(Reply(text="hi"), Reply(text="again"))
        result = await h.chat("hello")
        status = h.statuses[-1]
        assert status["contextWindow"] == 2048
        assert status["contextThreshold"] < 2048  # capped below the window (docs/context.md)
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert any("context window is 2048 tokens" in n and "num_ctx" in n for n in notices)
        second = await h.chat("again")
        assert not [e for e in h.of_turn(second["turnId"]) if e["type"] == "notice"]  # told once
        # The small family's prompt: short, for a 7B local model.
        assert len(fake.requests[0].body["instructions"]) < 2500


async def test_an_endpoint_without_a_window_api_falls_back_to_the_setting(shiro_home, fake, workspace):
    # The fake answers 404 to /api/show, /props and /api/v0/models; the model is in no table.
    async with service_harness(fake, shiro_home, workspace, model="house-model", contextWindow=50_000) as h:
        fake.script(Reply(text="hi"))
        await h.chat("hello")
        status = h.statuses[-1]
        assert status["contextWindow"] == 50_000 and status["contextThreshold"] <= 50_000
        assert status["contextThreshold"] < 120_000


def test_the_settings_refuse_a_bad_effort_and_family() -> None:
    from shiro_neko.config import Settings, merge_settings

    settings = merge_settings(Settings(), {"reasoningEffort": "huge", "promptFamily": "codex", "contextWindow": 12})
    assert settings.reasoningEffort is None and settings.promptFamily == "codex" and settings.contextWindow is None
    assert msgspec.to_builtins(merge_settings(settings, {"reasoningEffort": "minimal"}))["reasoningEffort"] == "minimal"
