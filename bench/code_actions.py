"""`textDocument/codeAction` answer time while a turn streams (issue 38: median <= 2 ms, p99 <= 10 ms).

Editors ask for code actions on every cursor move, so the server answers from the request alone
(server/lsp/code_actions.py). Here a client asks 20 times a second, alternately without and with
a diagnostic in the context, while the fake provider (a child process) streams a long answer
(one delta a millisecond) into a turn of the same server. Each figure is the round trip seen by
the client (bench/common/lsp_driver.py, a reader thread): the server's answer time plus the pipe,
so an upper bound of the time in the server. A second series asks with no turn running (after five
requests not counted: the first waits for the server's start).

Run: python bench/code_actions.py [--requests 400] [--quick]   Writes bench/results/code_actions.json.
"""

from __future__ import annotations

import argparse
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.fake_child import FakeChild  # noqa: E402
from common.lsp_driver import Server, server_env  # noqa: E402
from common.stats import summary, write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "code_actions.json"
RATE = 20  # requests per second
DIAGNOSTIC = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
              "message": "undefined name 'prnt'", "severity": 1, "code": "F821", "source": "flake8"}


def _params(uri: str, i: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": i % 5}, "end": {"line": 0, "character": 5}},
            "context": {"diagnostics": [DIAGNOSTIC] if i % 2 else []}}


def _request(server: Server, msg_id: str, method: str, params: Any) -> Any:
    """One request under our own id: `Server.request` counts ids on one shared attribute, which
    two threads (the chat and the code actions) would mix up."""
    answer: queue.Queue[dict[str, Any]] = queue.Queue()
    server.answers[msg_id] = answer
    server._send({"id": msg_id, "method": method, "params": params})
    msg = answer.get(timeout=600)
    del server.answers[msg_id]
    if "error" in msg:
        raise RuntimeError(f"{method}: {msg['error']}")
    return msg.get("result")


def series(server: Server, uri: str, n: int, streaming: threading.Event | None) -> list[float]:
    out: list[float] = []
    next_at = time.perf_counter()
    for i in range(n):
        next_at += 1 / RATE
        t0 = time.perf_counter()
        actions = _request(server, f"ca-{id(out)}-{i}", "textDocument/codeAction", _params(uri, i))
        out.append((time.perf_counter() - t0) * 1000)
        assert len(actions) == (4 if i % 2 else 3), actions
        if streaming is not None:
            assert streaming.is_set(), "the turn ended before the requests did: raise the stream's length"
        time.sleep(max(0.0, next_at - time.perf_counter()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 60 if args.quick else args.requests
    deltas = int(n / RATE * 1000 * 1.5) + 2000  # about a millisecond each: outlasts the requests
    with FakeChild() as fake, tempfile.TemporaryDirectory(prefix="shiro-bench-code-actions-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        (ws / "app.py").write_text("prnt('hello')\n")
        uri = (ws / "app.py").as_uri()
        server = Server(ws, server_env(Path(tmp, "home"), fake.base_url), {"memory": {"enabled": False}})
        server.keep_notes = False
        try:
            series(server, uri, 5, None)  # the first request waits for pygls's import (startup/lsp_front.py)
            idle = series(server, uri, n // 2, None)
            fake.script({"text": "abc " * deltas, "chunks": deltas, "delay": 0.001})
            streaming = threading.Event()
            done: dict[str, Any] = {}

            def chat() -> None:
                streaming.set()
                done["result"] = _request(server, "chat", "workspace/executeCommand",
                                          {"command": "shiro.chat", "arguments": [{"prompt": "stream a long answer"}]})
                streaming.clear()

            thread = threading.Thread(target=chat)
            thread.start()
            time.sleep(0.5)  # the request reached the fake and the deltas flow
            busy = series(server, uri, n, streaming)
            thread.join()
            assert done["result"]["status"] == "completed", done
        finally:
            server.close()
    result = {"rate_per_s": RATE, "while_streaming": summary(busy), "idle": summary(idle),
              "targets": {"median_ms": 2, "p99_ms": 10}}
    write_result(RESULTS, result)
    print(result)


if __name__ == "__main__":
    main()
