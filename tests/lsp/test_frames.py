"""The base protocol's framing under bad input, on the real server's stdin (lsp/pygls_overrides.py,
override 7): header names are case-insensitive; a malformed frame is logged with its reason and
the connection closed, never a silent hang (docs/protocol.md, "Malformed frames")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lsp.test_fuzz import RawClient


class LoggedClient(RawClient):
    """RawClient whose server's stderr goes to a file, to read the reason it gave."""

    def __init__(self, home: Path, root: Path) -> None:
        self.log = home.parent / "server.log"
        with self.log.open("wb") as log:
            super().__init__(home, root, stderr=log)

    def write_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()


@pytest.fixture
def client(tmp_path: Path):
    (tmp_path / "ws").mkdir()
    c = LoggedClient(tmp_path / "home", tmp_path / "ws")
    yield c
    if c.proc.poll() is None:
        c.close()


def test_header_names_are_case_insensitive(client: LoggedClient) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 900, "method": "workspace/executeCommand",
                       "params": {"command": "shiro.history", "arguments": [{}]}}).encode()
    client.write_raw(b"content-length: %d\r\ncontent-type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s" % (len(body), body))
    assert "prompts" in client.answer_for(900, timeout=20)["result"]
    client.alive()


@pytest.mark.parametrize("frame, reason", [
    (b"Content-Length: abc\r\n\r\n{}", "Content-Length is not a number"),
    (b"Content-Type: application/json\r\n\r\n{}", "without a Content-Length"),
    (b"no colon here\r\n\r\n", "without a colon"),
    (b"X-Long: " + b"a" * 20_000 + b"\r\n\r\n", "longer than"),
])
def test_a_malformed_frame_is_logged_and_closes_the_connection(client: LoggedClient, frame: bytes, reason: str) -> None:
    client.alive()
    client.write_raw(frame)
    assert client.proc.wait(20) is not None  # the server ended the connection: no silent hang
    log = client.log.read_text(errors="replace")
    assert "malformed LSP frame" in log and reason in log, log[-2000:]
