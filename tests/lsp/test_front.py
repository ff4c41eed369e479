"""The stdlib front that answers `initialize` before pygls and lsprotocol are imported
(server/startup/lsp_front.py; issue 28).

- Its answer is pygls's, for every client capability set it answers (the in-process pygls server
  computes the reference), and it leaves the shapes it cannot vouch for to pygls.
- In a fresh server whose `lsprotocol` import is held back, `initialize` is still answered; once the
  import is let through, the pygls server has the state the `initialize` gave it
  (initializationOptions) and answers everything else, with no second `initialize` answer.
- A malformed first frame is logged with its reason and closes the connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shiro_neko import __version__
from shiro_neko.startup import lsp_front
from tests.support.lsp import server_env

ROOT = Path(__file__).resolve().parents[2]

CLIENT_CAPABILITIES: dict[str, dict[str, Any]] = {
    "none": {},
    "utf-32 first": {"general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]}},
    "utf-8": {"general": {"positionEncodings": ["utf-8"]}},
    "unknown encodings only": {"general": {"positionEncodings": ["utf-7", "ebcdic"]}},
    "empty general": {"general": {}},
    "will-save off": {"textDocument": {"synchronization": {"willSave": False, "didSave": True}}},
    "an editor's": {  # the parts pygls's builder reads, all switched on
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {"applyEdit": True, "workspaceFolders": True, "configuration": True,
                      "fileOperations": {"didCreate": True, "willCreate": True, "didRename": True,
                                         "willRename": True, "didDelete": True, "willDelete": True}},
        "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True, "didSave": True},
                         "rename": {"prepareSupport": True}},
        "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
        "window": {"workDoneProgress": True, "showDocument": {"support": True}},
        "experimental": {"anything": [1, 2]},
    },
}


def initialize_params(capabilities: dict[str, Any], root: Path) -> dict[str, Any]:
    return {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities,
            "clientInfo": {"name": "test", "version": "1"}, "locale": "en", "trace": "off",
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            "initializationOptions": {"model": "front-model"}}


def pygls_answer(params: dict[str, Any]) -> dict[str, Any]:
    """What the pygls server answers `initialize` with, through its own reader and writer."""
    from shiro_neko.lsp import create_server

    server = create_server()
    sent: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            sent.append(data)

    server.protocol.set_writer(Writer())
    message = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params})

    async def handle() -> None:
        server.protocol.handle_message(json.loads(message, object_hook=server.protocol.structure_message))
        for _ in range(10):
            await asyncio.sleep(0)

    asyncio.run(handle())
    (frame,) = sent
    return json.loads(frame.partition(b"\r\n\r\n")[2])


@pytest.mark.parametrize("name", list(CLIENT_CAPABILITIES))
def test_the_fronts_initialize_answer_is_pyglss(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIRO_NEKO_HOME", str(tmp_path / "home"))
    params = initialize_params(CLIENT_CAPABILITIES[name], tmp_path)
    front = lsp_front.initialize_result(json.loads(json.dumps(params)), __version__)
    assert front is not None, "the front declined a plain initialize"
    pygls = pygls_answer(params)
    assert "error" not in pygls, pygls
    assert front == pygls["result"], (
        "server/startup/lsp_front.py CAPABILITIES no longer match what pygls answers; pygls's answer:\n"
        + json.dumps(pygls["result"], indent=1))
    framed = lsp_front.encode_response(7, front)
    head, _, body = framed.partition(b"\r\n\r\n")
    assert head.startswith(b"Content-Length: %d\r\n" % len(body)) and json.loads(body) == pygls


@pytest.mark.parametrize("params", [
    None, [], {"processId": None}, {"processId": None, "capabilities": "all"},
    {"processId": "1", "capabilities": {}}, {"processId": True, "capabilities": {}},
    {"processId": None, "rootUri": 5, "capabilities": {}},
    {"processId": None, "capabilities": {"general": {"positionEncodings": [8]}}},
    {"processId": None, "capabilities": {"general": {"positionEncodings": "utf-8"}}},
    {"processId": None, "capabilities": {"general": []}},
    {"processId": None, "capabilities": {}, "workspaceFolders": [{"uri": "file:///"}]},
    {"processId": None, "capabilities": {}, "clientInfo": {"version": "1"}},
    {"processId": None, "capabilities": {}, "trace": "loud"},
])
def test_shapes_the_front_cannot_vouch_for_are_left_to_pygls(params: Any) -> None:
    assert lsp_front.initialize_result(params, __version__) is None


# A fresh `shiro-lsp` whose `import lsprotocol` waits until the test creates a file.
HELD_IMPORT = r"""
import os, sys, time
release = sys.argv[1]

class HoldLsprotocol:
    def find_spec(self, name, path=None, target=None):
        if name == "lsprotocol":
            deadline = time.monotonic() + 60
            while not os.path.exists(release) and time.monotonic() < deadline:
                time.sleep(0.01)
        return None

sys.meta_path.insert(0, HoldLsprotocol())
from shiro_neko.cli import main
main([])
"""


class Wire:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.buffer = b""

    def send(self, message: dict[str, Any], header: bytes = b"Content-Length") -> None:
        assert self.proc.stdin is not None
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"%s: %d\r\n\r\n%s" % (header, len(body), body))
        self.proc.stdin.flush()

    def read(self, timeout: float = 30.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd, deadline = self.proc.stdout.fileno(), time.monotonic() + timeout
        while True:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = int(next(line for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")).split(b":")[1])
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    return json.loads(rest[:length])
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise AssertionError("no message in time")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError("the server closed its output")
            self.buffer += chunk

    def answer_for(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = self.read()
            if "method" in message:
                if "id" in message:  # workspace/configuration: no settings from this client
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": [None]})
                continue
            assert message.get("id") == msg_id, f"an answer to {message.get('id')} while waiting for {msg_id}: {message}"
            return message


def test_initialize_is_answered_before_lsprotocol_is_imported_and_pygls_takes_over(tmp_path: Path) -> None:
    ws, trace, release = tmp_path / "ws", tmp_path / "trace", tmp_path / "release"
    ws.mkdir()
    env = server_env(tmp_path / "home", "http://127.0.0.1:9/v1", SHIRO_TRACE=str(trace))
    log = tmp_path / "server.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-c", HELD_IMPORT, str(release)], cwd=ROOT, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    wire = Wire(proc)
    try:
        params = initialize_params({"general": {"positionEncodings": ["utf-32"]}}, ws)
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, header=b"content-length")
        answer = wire.read(timeout=30)  # lsprotocol is held for 60 s: only the front can answer now
        marks = [line.split(" ", 2)[2] for line in trace.read_text().splitlines()]
        assert "front-initialize-answered" in marks and "server-imported" not in marks, marks
        assert answer["id"] == 1 and answer["result"]["capabilities"]["positionEncoding"] == "utf-32"

        release.touch()
        wire.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
                   "params": {"command": "shiro.status", "arguments": [{}]}})
        status = wire.answer_for(2)  # the next message for this client: no second initialize answer
        assert status["result"]["model"] == "front-model", status  # pygls saw initializationOptions
        wire.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        assert wire.answer_for(3)["result"] is None
        wire.send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text(errors="replace")
    assert "the front answered initialize" not in text, text[-2000:]


@pytest.mark.parametrize("frame, reason", [
    (b"Content-Length: abc\r\n\r\n{}", "Content-Length is not a number"),
    (b"Content-Length: 99999999999\r\n\r\n", "over the 256 MB limit"),
    (b"Content-Length: 40\r\n\r\n{\"jsonrpc\"", "the input ended inside a frame's body (10 of 40 bytes)"),
    (b"X-Long: " + b"a" * 20_000 + b"\r\n\r\n", "a header line longer than 8192 bytes"),
    (b"no colon\r\n\r\n", "a header line without a colon"),
])
def test_a_malformed_first_frame_is_logged_and_closes_the_connection(tmp_path: Path, frame: bytes, reason: str) -> None:
    env = server_env(tmp_path / "home", "http://127.0.0.1:9/v1")
    proc = subprocess.run([sys.executable, "-m", "shiro_neko"], input=frame, capture_output=True, env=env, timeout=60)
    err = proc.stderr.decode(errors="replace")
    assert "malformed LSP frame" in err and reason in err, err[-2000:]
    assert proc.stdout == b""  # nothing answered


def test_an_initialize_the_front_declines_is_answered_by_pygls_once(tmp_path: Path) -> None:
    env = server_env(tmp_path / "home", "http://127.0.0.1:9/v1")
    proc = subprocess.Popen([sys.executable, "-m", "shiro_neko"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    wire = Wire(proc)
    try:
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": "not a number", "capabilities": {}}})
        assert wire.answer_for(1)["error"]["code"] == -32602  # pygls's refusal, as before the front
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert wire.answer_for(2)["result"] is None  # not a second answer to 1
    finally:
        proc.kill()
        proc.wait()
