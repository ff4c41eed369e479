"""`shiro-lsp --tcp`: the same server on a socket (initialize answered, commands advertised)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _send(sock: socket.socket, payload: dict) -> None:
    body = json.dumps(payload).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _read(sock: socket.socket) -> dict:
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        header += sock.recv(1)
    length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
    body = b""
    while len(body) < length:
        body += sock.recv(length - len(body))
    return json.loads(body)


def test_tcp_initialize(tmp_path):
    port = _free_port()
    token = "a-token-for-this-test-only"  # every TCP client presents the start's token (tests/lsp/test_tcp_guard.py)
    env = {**os.environ, "SHIRO_NEKO_HOME": str(tmp_path), "SHIRO_LSP_TOKEN": token}
    proc = subprocess.Popen([sys.executable, "-m", "shiro_neko", "--tcp", "--host", "127.0.0.1", "--port", str(port)], env=env)
    try:
        # Until it listens: a loaded machine may take many seconds to import and start the server.
        deadline = time.monotonic() + 90
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                assert proc.poll() is None, f"the server exited with {proc.returncode} before it listened"
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.1)
        with sock:
            _send(sock, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}, "initializationOptions": {"authToken": token}}})
            reply = _read(sock)
            while "id" not in reply:
                reply = _read(sock)
            commands = reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
            assert "shiro.chat" in commands and reply["result"]["serverInfo"]["name"] == "shiro-neko"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
