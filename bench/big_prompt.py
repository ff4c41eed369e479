"""After a 50 MB prompt, how long does the server take to answer the next request?

A real server over stdio (bench/common/lsp_driver.py), the fake provider in a child process. Sends
`shiro.chat` with a prompt of --mb MB, then `shiro.status` every 50 ms until the turn has ended
and two more seconds: the longest status answer is what any other request of the editor waited.
Also the chat's own time, and the server's peak RSS. Issue 22 saw 30 s once.

Writes bench/results/big_prompt.json. Run: python bench/big_prompt.py [--mb 50]
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.fake_child import FakeChild  # noqa: E402
from common.lsp_driver import Server, server_env  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "big_prompt.json"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--slow-log", help="copy the server's stderr, with PYTHONASYNCIODEBUG's slow-callback lines, here")
    parser.add_argument("--profile", help="a py-spy profile of the server (speedscope JSON: samples per thread, in order) into this file")
    args = parser.parse_args()
    prompt = ("All work and no play makes a dull prompt. " * 1 + "\n") * int(args.mb * 1024 * 1024 / 43)
    out: dict[str, object] = {"prompt_mb": round(len(prompt) / 1024 / 1024, 1)}
    with tempfile.TemporaryDirectory() as tmp, FakeChild() as fake:
        root, home = Path(tmp) / "ws", Path(tmp) / "home"
        root.mkdir()
        fake.script({"text": "ok"}, {"text": "ok again"})
        log = open(Path(tmp) / "server.log", "wb")
        argv = None
        if args.profile:
            argv = ["py-spy", "record", "--threads", "--format", "speedscope", "-r", "200", "-o", args.profile, "--",
                    sys.executable, "-m", "shiro_neko"]
        server = Server(root, server_env(home, fake.base_url, **({"PYTHONASYNCIODEBUG": "1"} if args.slow_log else {})), {"approvals": "auto"}, argv=argv, stderr=log)
        try:
            server.command("shiro.status", {})
            done: dict[str, float] = {}

            # The driver's request() is for one thread: the chat's id is taken here, its frame
            # written from a thread (50 MB into a pipe blocks), its answer read from its queue.
            server.next_id += 1
            chat_id, answer = server.next_id, queue.Queue()  # type: ignore[var-annotated]
            server.answers[chat_id] = answer

            def chat() -> None:
                start = time.perf_counter()
                server._send({"id": chat_id, "method": "workspace/executeCommand",
                              "params": {"command": "shiro.chat", "arguments": [{"prompt": prompt}]}})
                msg = answer.get(timeout=600)
                if "error" in msg:
                    done["error"] = str(msg["error"])[:200]  # type: ignore[assignment]
                done["chat_s"] = time.perf_counter() - start

            thread = threading.Thread(target=chat)
            sent = time.perf_counter()
            thread.start()
            waits, peak_rss = [], 0
            while "chat_s" not in done or time.perf_counter() - sent < done["chat_s"] + 2:
                start = time.perf_counter()
                try:
                    server.command("shiro.status", {}, timeout=60)
                except Exception as exc:
                    print("status failed:", exc, flush=True)
                    print((Path(tmp) / "server.log").read_text(errors="replace")[-5000:], flush=True)
                    raise
                waits.append((round(start - sent, 2), round(time.perf_counter() - start, 3)))
                peak_rss = max(peak_rss, server.rss_kb())
                time.sleep(0.05)
            thread.join()
            worst = max(waits, key=lambda w: w[1])
            second = time.perf_counter()
            server.command("shiro.chat", {"prompt": "and now a short one"}, timeout=600)
            out.update(chat_s=round(done["chat_s"], 2), chat_error=done.get("error"),
                       status_worst_s=worst[1], status_worst_at_s=worst[0], status_samples=len(waits),
                       next_chat_s=round(time.perf_counter() - second, 2), peak_rss_mb=round(peak_rss / 1024),
                       slow_statuses=[w for w in waits if w[1] > 0.2][:40])
        finally:
            server.close()
            if args.slow_log:
                Path(args.slow_log).write_bytes((Path(tmp) / "server.log").read_bytes())
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
