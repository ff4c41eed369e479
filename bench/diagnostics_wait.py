"""How long an edit's result waits for the editor's diagnostics, with a real language server (issue 38).

This process plays the editor: it runs pyright's language server (the `pyright` package from
PyPI, on the system's node) and the shiro server side by side, keeps app.py open in both, applies
shiro's `workspace/applyEdit` to its buffer and passes the change to pyright (didChange), and
answers `shiro/diagnostics` with what pyright last published, as the editor clients do. The
fake provider (a child process) scripts one edit per turn, in cycles of three kinds:

- `introduces`: the edit makes a type error (the result waits until pyright's new diagnostics
  arrive and hold still for one more poll);
- `fixes`: the edit removes it (the diagnostics change too: the same wait, and no error listed);
- `clean`: a comment changes, no diagnostic does: with the publication count the clients send
  (`generation`, VS Code and Neovim) the result returns once pyright has published again; without
  it (`--no-generation`, results in diagnostics_wait_uncounted.json) it waits the whole
  `diagnosticsWaitMs`.

Figures: the wait as the client sees it (its `workspace/applyEdit` answered -> the `tool_result`
event), and pyright's own time from the change to its publishDiagnostics, per kind.

Run: python bench/diagnostics_wait.py [--cycles 8] [--wait-ms 2000]   Writes bench/results/diagnostics_wait.json.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.fake_child import FakeChild  # noqa: E402
from common.lsp_driver import read_frame, server_env  # noqa: E402
from common.stats import summary, write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "diagnostics_wait.json"
BASE = "def greet(name: str) -> str:\n    return 'hello ' + name\n\n\n# a comment\nx: int = 1\n"
EDITS = [  # (kind, old, new) applied in turn, so each cycle ends where it began
    ("introduces", "x: int = 1", 'x: int = "one"'),
    ("fixes", 'x: int = "one"', "x: int = 1"),
    ("clean", "# a comment", "# another comment"),
    ("clean", "# another comment", "# a comment"),
]


class Peer:
    """One LSP peer over stdio, answered by `on_request`; notifications go to `on_note`."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, on_request: Any, on_note: Any) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=str(cwd), env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.on_request, self.on_note = on_request, on_note
        self.answers: dict[Any, Any] = {}
        self.cond = threading.Condition()
        self.lock = threading.Lock()
        self.ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def send(self, payload: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **payload}).encode()
        with self.lock:
            self.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
            self.stdin.flush()

    def _read(self) -> None:
        while True:
            body = read_frame(self.stdout)
            if body is None:
                return
            msg = json.loads(body)
            if "method" in msg and "id" in msg:
                self.send({"id": msg["id"], "result": self.on_request(msg["method"], msg.get("params"))})
            elif "method" in msg:
                self.on_note(msg["method"], msg.get("params"))
            else:
                with self.cond:
                    self.answers[msg.get("id")] = msg
                    self.cond.notify_all()

    def request(self, method: str, params: Any, timeout: float = 120) -> Any:
        with self.lock:
            self.ids += 1
            msg_id = self.ids
        self.send({"id": msg_id, "method": method, "params": params})
        with self.cond:
            if not self.cond.wait_for(lambda: msg_id in self.answers, timeout):
                raise TimeoutError(method)
            msg = self.answers.pop(msg_id)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=8)
    parser.add_argument("--wait-ms", type=int, default=2000)
    parser.add_argument("--no-generation", dest="generation", action="store_false",
                        help="answer without `generation` (a client that does not count publications)")
    args = parser.parse_args()
    langserver = shutil.which("pyright-langserver") or str(Path(sys.executable).with_name("pyright-langserver"))
    if not Path(langserver).exists():
        sys.exit("pyright-langserver not found: pip install pyright")
    with FakeChild() as fake, tempfile.TemporaryDirectory(prefix="shiro-bench-diagnostics-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        app = ws / "app.py"
        app.write_text(BASE)
        uri = app.as_uri()
        text = [BASE]
        version = [1]
        published: dict[str, list[Any]] = {}
        generation = [0]  # pyright's publications of app.py, as the editor clients count them
        published_at: list[float] = []
        events: list[tuple[float, dict[str, Any]]] = []
        applied_at: list[float] = []
        state = threading.Condition()

        def pyright_note(method: str, params: Any) -> None:
            if method == "textDocument/publishDiagnostics" and params.get("uri") == uri:
                with state:
                    if params.get("version") in (None, version[0]):
                        published[uri] = params["diagnostics"]
                        generation[0] += 1
                        published_at.append(time.perf_counter())
                        state.notify_all()

        pyright = Peer([langserver, "--stdio"], dict(os.environ), ws, lambda m, p: pyright_request(m, p), pyright_note)

        def shiro_request(method: str, params: Any) -> Any:
            if method == "shiro/diagnostics":
                with state:
                    item: dict[str, Any] = {"uri": uri, "diagnostics": list(published.get(uri, []))}
                    if args.generation:
                        item["generation"] = generation[0]
                    return {"items": [item]}
            if method == "workspace/applyEdit":
                [edit] = params["edit"]["changes"][uri]
                with state:
                    text[0] = edit["newText"]  # the server replaces the whole buffer
                    version[0] += 1
                    change = {"textDocument": {"uri": uri, "version": version[0]}, "contentChanges": [{"text": text[0]}]}
                pyright.notify("textDocument/didChange", change)
                shiro.notify("textDocument/didChange", change)
                applied_at.append(time.perf_counter())
                return {"applied": True}
            if method == "window/showMessageRequest":
                return {"title": "Allow"}
            return None

        def pyright_request(method: str, params: Any) -> Any:
            # workspace/configuration: one null (the defaults) per item asked
            return [None] * len(params.get("items", [])) if method == "workspace/configuration" else None

        def shiro_note(method: str, params: Any) -> None:
            if method == "shiro/event" and params.get("type") == "tool_result":
                events.append((time.perf_counter(), params))

        env = server_env(Path(tmp, "home"), fake.base_url, SHIRO_MODEL="test-model")
        shiro = Peer([sys.executable, "-m", "shiro_neko"], env, ws, shiro_request, shiro_note)
        try:
            folders = [{"uri": ws.as_uri(), "name": "ws"}]
            pyright.request("initialize", {"processId": os.getpid(), "rootUri": ws.as_uri(), "workspaceFolders": folders,
                                           "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
            pyright.notify("initialized", {})
            shiro.request("initialize", {
                "processId": os.getpid(), "rootUri": ws.as_uri(), "workspaceFolders": folders,
                "capabilities": {"workspace": {"applyEdit": True}, "experimental": {"shiro": {"editor": {"diagnostics": True}}}},
                "initializationOptions": {"memory": {"enabled": False}, "approvals": "auto", "diagnosticsWaitMs": args.wait_ms},
            })
            shiro.notify("initialized", {})
            opened = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BASE}}
            pyright.notify("textDocument/didOpen", opened)
            shiro.notify("textDocument/didOpen", opened)
            with state:
                state.wait_for(lambda: uri in published, 120)  # pyright's first analysis
            waits: dict[str, list[float]] = {kind: [] for kind, _, _ in EDITS}
            pyright_ms: dict[str, list[float]] = {kind: [] for kind, _, _ in EDITS}
            listed: dict[str, int] = {kind: 0 for kind, _, _ in EDITS}
            for _ in range(args.cycles):
                for kind, old, new in EDITS:
                    fake.script({"calls": [["edit_file", {"path": "app.py", "old_text": old, "new_text": new}]]}, {"text": "ok"})
                    before_events, before_pub = len(events), len(published_at)
                    result = shiro.request("workspace/executeCommand", {"command": "shiro.chat", "arguments": [{"prompt": kind}]})
                    assert result["status"] == "completed", result
                    at, event = events[before_events]
                    waits[kind].append((at - applied_at[-1]) * 1000)
                    later = [t for t in published_at[before_pub:] if t > applied_at[-1]]
                    if later:
                        pyright_ms[kind].append((later[0] - applied_at[-1]) * 1000)
                    listed[kind] += "new errors after this edit" in event["output"]
        finally:
            shiro.close()
            pyright.close()
    result = {
        "language_server": f"pyright {importlib.metadata.version('pyright')} (PyPI), on node",
        "diagnosticsWaitMs": args.wait_ms,
        "client_counts_publications": args.generation,
        "edit_result_wait": {kind: summary(v) for kind, v in waits.items()},
        "pyright_publish_after_change": {kind: summary(v) for kind, v in pyright_ms.items()},
        "results_listing_new_errors": listed,
    }
    for kind, values in waits.items():
        ordered = sorted(values)
        result["edit_result_wait"][kind]["p95_ms"] = round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2)
    write_result(RESULTS if args.generation else RESULTS.with_name("diagnostics_wait_uncounted.json"), result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
