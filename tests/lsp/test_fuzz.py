"""Bad input over the wire, property-based (hypothesis): every command with arbitrary arguments,
and arbitrary JSON-RPC messages (and frames that are not JSON at all) written straight onto the
real server's stdin. Every request gets a result or an error with a message, a refused command
changes no file, and the server answers the next request. (A wrong Content-Length cannot be
recovered from, by design of the framing: out of scope.)

A raw client rather than pytest-lsp: the point is to send what a well-behaved client cannot.
SHIRO_FULL_PROPERTIES=1 runs more examples."""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.lsp import server_env

FULL = os.environ.get("SHIRO_FULL_PROPERTIES") == "1"
EXAMPLES = 1000 if FULL else 150
COMMANDS = [
    "shiro.chat", "shiro.abort", "shiro.status", "shiro.save", "shiro.sessions", "shiro.resume", "shiro.newSession",
    "shiro.compact", "shiro.history", "shiro.todos", "shiro.notes", "shiro.remember", "shiro.recall", "shiro.forget",
    "shiro.memory", "shiro.mcp", "shiro.nope",
]
# Lifecycle methods would end the session under test; everything else is fair game.
METHODS = [
    "workspace/executeCommand", "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
    "workspace/didChangeConfiguration", "workspace/didChangeWorkspaceFolders", "textDocument/completion",
    "$/cancelRequest", "$/setTrace", "workspace/symbol", "shiro/unknown",
]


class RawClient:
    def __init__(self, home: Path, root: Path, stderr: Any = subprocess.DEVNULL) -> None:
        env = server_env(home, "http://127.0.0.1:9/v1")  # chats fail fast: nothing listens there
        self.proc = subprocess.Popen([sys.executable, "-m", "shiro_neko"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr, env=env)
        self.buffer = b""
        self.ids = itertools.count(1)
        self.home = home
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                                    "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}]})
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def write(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode())

    def _read_message(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")).split(b":")[1])
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    return json.loads(rest[:length])
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise AssertionError("the server did not answer in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError("the server closed its output (it died)")
            self.buffer += chunk

    def answer_for(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        """Read until the response to `msg_id`; requests from the server are answered with null."""
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if "method" in message:
                if "id" in message:  # workspace/configuration, a dialog: nobody answers anything
                    result = [None] if message["method"] == "workspace/configuration" else None
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                continue
            if message.get("id") == msg_id:
                return message

    def request(self, method: str, params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.answer_for(msg_id)

    def alive(self) -> None:
        answer = self.request("workspace/executeCommand", {"command": "shiro.history", "arguments": [{}]})
        assert "prompts" in answer["result"], answer

    def files(self) -> dict[str, bytes]:
        return {str(p): p.read_bytes() for p in self.home.rglob("*") if p.is_file() and not p.name.endswith(".lock")}

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    (base / "ws").mkdir()
    (base / "ws" / "a.py").write_text("x = 1\n")
    client = RawClient(base / "home", base / "ws")
    yield client
    client.close()


def check_answer(answer: dict[str, Any]) -> None:
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str) and error["message"].strip(), answer


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
# Arguments shaped like the real ones, with keys commands read, so the decoding is exercised too.
argument_objects = st.dictionaries(
    st.sampled_from(["prompt", "sessionId", "id", "latest", "workspace", "kind", "text", "query", "terms", "attachments",
                     "private", "focus", "prefix", "limit"]) | st.text(max_size=8),
    json_values, max_size=5,
)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(command=st.sampled_from(COMMANDS), arguments=st.none() | st.lists(argument_objects | json_values, max_size=3) | json_values)
def test_every_command_answers_arbitrary_arguments(raw, command, arguments):
    raw.request("workspace/executeCommand", {"command": "shiro.save", "arguments": [{}]})  # nothing pending
    before = raw.files()
    params: dict[str, Any] = {"command": command}
    if arguments is not None:
        params["arguments"] = arguments
    answer = raw.request("workspace/executeCommand", params)
    check_answer(answer)
    if "error" in answer:
        assert raw.files() == before, f"a refused {command} changed files: {answer['error']['message']}"
    raw.alive()


ids = st.integers(10**6, 10**9) | st.text(min_size=1, max_size=10).map(lambda s: f"fuzz-{s}")


@SETTINGS
@given(
    method=st.sampled_from(METHODS) | st.text(max_size=20),
    msg_id=st.none() | ids | st.floats(allow_nan=False) | st.lists(st.integers(), max_size=2) | st.booleans(),
    params=st.none() | json_values | argument_objects,
    jsonrpc=st.sampled_from(["2.0", "2.0", "2.0", "1.0", ""]),
    drop=st.sets(st.sampled_from(["jsonrpc", "method", "params"]), max_size=2),
)
def test_malformed_messages_are_answered_or_ignored(raw, method, msg_id, params, jsonrpc, drop):
    message: dict[str, Any] = {"jsonrpc": jsonrpc, "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    for key in drop:
        message.pop(key)
    raw.send(message)
    well_formed_request = (
        message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str)
        and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool)
    )
    if well_formed_request:
        check_answer(raw.answer_for(msg_id))
    raw.alive()


@SETTINGS
@given(body=st.binary(min_size=1, max_size=200) | st.text(max_size=100).map(str.encode))
def test_frames_that_are_not_json_are_skipped(raw, body):
    try:
        json.loads(body)
        return  # valid JSON is the other test's business
    except ValueError:
        pass
    raw.write(body)
    raw.alive()


def test_params_that_do_not_fit_get_a_clear_error(raw):
    """The pygls 2.1.1 gap: a request whose params do not fit its method got no answer at all."""
    for params in ([1, 2], "text", {"arguments": "no"}, 7):
        answer = raw.request("workspace/executeCommand", params)
        assert answer["error"]["code"] == -32602, answer
        assert answer["error"]["message"].startswith("invalid params for workspace/executeCommand: "), answer
    raw.alive()
