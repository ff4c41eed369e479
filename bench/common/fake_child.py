"""The fake provider (tests/fake_provider.py) in a child process, so its JSON work never competes
with the measured process for a GIL. The parent scripts it over stdin, one JSON line per command:

    {"script": [{"text": "done"}, {"calls": [["run_command", {"command": "true"}]]}]}
    {"chunk_times": true}     -> {"chunk_times_ns": [...]}  (CLOCK_MONOTONIC per SSE chunk written)
    {"requests": true}        -> {"requests": [{"first_byte_ns", "end_ns", "bytes", "port"}...]}

and reads one JSON line back per command. Request arrival and response end are also written as
`fake-request` / `fake-response-end` marks when SHIRO_TRACE is set (see shiro_neko.startup.trace).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _reply(fp: Any, spec: dict[str, Any]) -> Any:
    calls = [fp.Call(name, args) for name, args in spec.pop("calls", [])]
    return fp.Reply(calls=calls, **spec)


def serve() -> None:
    sys.path.insert(0, str(ROOT))
    from shiro_neko.startup.trace import mark
    from tests import fake_provider as fp

    handler = fp._Handler
    parse, run_stream, chunk = handler.parse_request, handler._run_stream, handler._chunk
    requests: list[dict[str, Any]] = []
    chunk_times: list[int] = []

    def parse_request(self: Any) -> bool:
        self._bench_first = time.monotonic_ns()
        mark("fake-request")
        return parse(self)

    def _run_stream(self: Any, *args: Any) -> None:
        run_stream(self, *args)
        end = time.monotonic_ns()
        mark("fake-response-end")
        requests.append({"first_byte_ns": getattr(self, "_bench_first", end), "end_ns": end,
                         "bytes": int(self.headers.get("Content-Length") or 0),
                         "port": self.client_address[1]})  # the client's port: one per connection

    def _chunk(self: Any, data: bytes) -> None:
        chunk(self, data)
        chunk_times.append(time.monotonic_ns())

    handler.parse_request = parse_request  # type: ignore[method-assign]
    handler._run_stream = _run_stream  # type: ignore[method-assign]
    handler._chunk = _chunk  # type: ignore[method-assign]

    fake = fp.FakeProvider().start()
    print(json.dumps({"base_url": fake.base_url}), flush=True)
    try:
        for line in sys.stdin:
            cmd = json.loads(line)
            if "script" in cmd:
                fake.script(*[_reply(fp, dict(s)) for s in cmd["script"]])
                out: dict[str, Any] = {"ok": True}
            elif "chunk_times" in cmd:
                out = {"chunk_times_ns": list(chunk_times)}
                chunk_times.clear()
            elif "requests" in cmd:
                out = {"requests": list(requests)}
                requests.clear()
            elif "loop" in cmd:
                # Every request with tools gets a tool call until `steps` were made, then text;
                # requests without tools (side requests: summaries) get a short text.
                spec = dict(cmd["loop"])
                left = [int(spec["steps"])]
                name, call_args = spec["call"]
                final = str(spec.get("text", "done"))

                def step(req: Any, left: list[int] = left, name: str = name, call_args: Any = call_args,
                         final: str = final) -> Any:
                    if not (isinstance(req.body, dict) and req.body.get("tools")):
                        return fp.Reply(text="A short summary of the span.", chunks=1)
                    if left[0] > 0:
                        left[0] -= 1
                        return fp.Reply(calls=[fp.Call(name, call_args)], chunks=1)
                    return fp.Reply(text=final, chunks=1)

                with fake._lock:
                    fake._steps.clear()  # a loop replaces whatever was scripted before
                fake.script(*[step] * (int(spec["steps"]) + 1 + int(spec.get("extra", 20))))
                out = {"ok": True}
            elif "bodies" in cmd:
                out = {"bodies": [json.dumps(r.body) for r in fake.requests]}
                fake.requests.clear()
            elif "pending" in cmd:
                out = {"pending": fake.pending}
            elif "clear" in cmd:
                with fake._lock:
                    fake._steps.clear()
                fake.requests.clear()
                out = {"ok": True}
            elif "forget" in cmd:
                fake.forget_items()
                out = {"ok": True}
            else:
                out = {"error": f"unknown command {cmd!r}"}
            print(json.dumps(out), flush=True)
    finally:
        fake.stop()


class FakeChild:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=str(ROOT), env=env)
        self.base_url: str = self._read()["base_url"]
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"fake provider child exited ({self.proc.poll()})")
        return json.loads(line)

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
            return self._read()

    def script(self, *steps: dict[str, Any]) -> None:
        self.ask(script=list(steps))

    def requests(self) -> list[dict[str, Any]]:
        return self.ask(requests=True)["requests"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "FakeChild":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


if __name__ == "__main__":
    serve()
