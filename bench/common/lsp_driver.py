"""A real `shiro-lsp` over stdio, driven by a raw JSON-RPC client that timestamps every message
(CLOCK_MONOTONIC, time.monotonic_ns) on a reader thread, so notification latency can be read."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One LSP frame's body from a server's stdout; None when the stream ended."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue
            return stream.read(length)
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())


def server_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_", "PYTHONPROFILE"))}
    env.update(SHIRO_NEKO_HOME=str(home), OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench-not-a-key",
               SHIRO_WARM="0")
    env.update(extra)
    return env


class Server:
    def __init__(self, workspace: Path, env: dict[str, str], options: dict[str, Any] | None = None,
                 python: str = sys.executable, argv: list[str] | None = None, stderr: Any = subprocess.DEVNULL) -> None:
        self.proc = subprocess.Popen(argv or [python, "-m", "shiro_neko"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr, cwd=str(workspace), env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.next_id = 0
        self.answers: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self.notes: list[tuple[int, dict[str, Any]]] = []  # (arrival ns, message)
        self.keep_notes = True
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.request("initialize", {
            "processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
            "initializationOptions": options or {},
        })
        self.notify("initialized", {})

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **payload}).encode()
        with self._lock:
            self.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
            self.stdin.flush()

    def _read(self) -> None:
        while True:
            body = read_frame(self.stdout)
            if body is None:  # the server exited: fail every waiting request at once
                for q in list(self.answers.values()):
                    q.put({"error": f"server exited ({self.proc.poll()})"})
                return
            at = time.monotonic_ns()
            msg = json.loads(body)
            if "method" in msg and "id" in msg:  # server->client request: approve everything
                result = {"title": "Allow"} if msg["method"] == "window/showMessageRequest" else None
                self._send({"id": msg["id"], "result": result})
            elif "method" in msg:
                if self.keep_notes:
                    self.notes.append((at, msg))
            else:
                q = self.answers.get(msg.get("id"))
                if q is not None:
                    q.put(msg)

    def request(self, method: str, params: Any, timeout: float = 600) -> Any:
        self.next_id += 1
        q: queue.Queue[dict[str, Any]] = queue.Queue()
        self.answers[self.next_id] = q
        self._send({"id": self.next_id, "method": method, "params": params})
        msg = q.get(timeout=timeout)
        del self.answers[self.next_id]
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def command(self, name: str, args: dict[str, Any], timeout: float = 600) -> Any:
        return self.request("workspace/executeCommand", {"command": name, "arguments": [args]}, timeout)

    def rss_kb(self, field: str = "VmRSS") -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=60)
            self.notify("exit", None)
            self.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()
