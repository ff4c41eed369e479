"""`shiro -p PROMPT`: one turn, the answer on stdout, progress and errors on stderr.

Works with no terminal at all (stdin at /dev/null, output piped): scripts, CI, benchmarks.
stdout gets the answer and nothing else: streamed live when stdout is a terminal, else the
turn's final text once it ends (`--output-format json|stream-json`: clients/terminal/output_format.py).
Exit status: 0 completed, 1 error, 3 stopped by the cost limit, 130 aborted (Ctrl-C).
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import sys
import threading
import time
from typing import Any, TextIO

from .markdown import MarkdownBlocks
from .markdown import to_ansi as to_markdown_ansi
from . import nested, render
from .approval_text import approval_lines, question, request_text
from . import notify, permissions_view
from .connection import CommandError, Connection, ServerGone
from ..model.visible_text import visible
from .typed_ahead import drop_typed_ahead
from .. import protocol as wire

from .output_format import EXIT_ABORTED, EXIT_COST_LIMIT, EXIT_ERROR, EXIT_OK, Collector
APPROVAL_HINT = (
    "run `shiro` in a terminal to answer, or pass --approvals auto-edit (edits) or --approvals auto"
    " (edits and commands) to allow it"
)
AUTO_ONLY_HINT = (
    "run `shiro` in a terminal to answer, or pass --approvals auto to allow it (auto-edit still asks"
    " for MCP calls and for commands outside the sandbox)"
)
# Under auto only what must never run unasked still asks (a command whose sandbox cannot be
# enforced): no flag allows it; an interactive `shiro` can.
UNDER_AUTO_HINT = "this call needs a yes even under --approvals auto; run `shiro` in a terminal to answer it"
APPROVAL_ACTIONS = ["Allow", "Always allow", "Deny"]


def approval_hint(message: str, actions: list[str], approvals: str | None) -> str | None:
    """What would have allowed this call, and only that: `auto-edit` never allows an MCP call, nor
    a command outside the sandbox; under `auto` a question is one no flag answers. Not a tool
    approval (the trust question): no hint."""
    if actions != APPROVAL_ACTIONS:
        return None
    if approvals == "auto":
        return UNDER_AUTO_HINT
    if approvals == "auto-edit" or "the MCP tool" in message:
        return AUTO_ONLY_HINT
    return APPROVAL_HINT


class OneShot:
    def __init__(self, conn: Connection, out: TextIO = sys.stdout, err: TextIO = sys.stderr, approvals: str | None = None,
                 output_format: str = "text", resumed: bool = False) -> None:
        self.conn = conn
        self.approvals = approvals  # the mode this run asked for (flag or settings), for a true hint
        self.out, self.err = out, err
        self.collector = Collector(output_format, out)  # --output-format json|stream-json: stdout is theirs
        self.resumed = resumed  # -c/-r: the result's usage is this turn's, not the session's
        self.stream_out = out.isatty() and output_format == "text"
        self.color = err.isatty()
        self.stream = render.TextStream()
        self.blocks = MarkdownBlocks()  # stdout a terminal: the answer as markdown, a block at a time
        self.tools = render.ToolNames()
        self.interrupted = False
        self.asking = asyncio.Lock()  # one question on the terminal at a time, its request right above it
        conn.listeners.event = self.on_event
        conn.listeners.message = lambda kind, message: self._note([("yellow" if kind <= 2 else "dim", message)])
        conn.listeners.approve = self.approve
        conn.listeners.approve_call = self.approve_call

    def _note(self, line: render.Line) -> None:
        print(render.to_ansi(line, self.color), file=self.err, flush=True)

    def on_event(self, event: wire.Event) -> None:
        self.collector.event(event)
        if nested.parent_of(event) is not None:  # a task subagent's: notes on stderr, never the answer
            for line in nested.lines(event, self.tools):
                self._note(line)
            return
        if isinstance(event, wire.TextDeltaEvent):
            lines = self.stream.feed(event.text)
            if self.stream_out:
                self._write_blocks(self.blocks.feed(lines))
            return
        if isinstance(event, wire.ToolCallEvent):
            self._end_text()
        if isinstance(event, wire.TurnEndEvent):  # the result of shiro.chat reports the outcome
            return
        for line in render.event_lines(event, self.tools):
            self._note(line)

    def _write_blocks(self, blocks: list[str]) -> None:
        width = shutil.get_terminal_size().columns
        for block in blocks:
            self.out.write(to_markdown_ansi(block, width) + "\n\n")
        self.out.flush()

    def _end_text(self) -> None:
        lines = self.stream.flush()
        if self.stream_out:
            self._write_blocks(self.blocks.feed(lines) + self.blocks.flush())

    async def approve(self, message: str, actions: list[str]) -> str | None:
        if wire.TRUST in actions:
            # The trust question: never asked here; the server names what it holds back in a notice.
            return None
        if not sys.stdin.isatty():
            self._note([("yellow", f"shiro: denied, no terminal to ask: {message}")])
            hint = approval_hint(message, actions, self.approvals)
            if hint:
                self._note([("yellow", f"shiro: {hint}")])
            return "Deny"
        async with self.asking:
            self._end_text()
            # The request and its question go to the terminal that answers (stderr may be a log
            # file: the question must never be asked without what it is about); a log gets a copy.
            shown = "".join(render.to_ansi(line, True) + "\n" for line in approval_lines(message))
            if not self.err.isatty():
                for line in approval_lines(message):
                    self._note(line)
            ask = render.to_ansi([("yellow", question("[a]llow / al[w]ays / [d]eny", message) + ": ")], True)
            # A bell and OSC 9 first: `-p` cannot know whether its terminal has focus (notify.py).
            answer = await _in_daemon_thread(_ask_tty, notify.notification(message).decode() + shown + ask)
        return {"a": "Allow", "y": "Allow", "w": "Always allow"}.get(answer[:1].lower(), "Deny")

    async def approve_call(self, params: wire.ApproveParams) -> wire.ApproveResult | None:
        """`shiro/approve`: as `approve`, with the call's diff (capped) under the request and a
        denial that may carry a reason for the model (`r` and the reason, on the same line or the next)."""
        message = request_text(params)
        if not sys.stdin.isatty():
            await self.approve(message, [wire.ALLOW, wire.ALWAYS_ALLOW, wire.DENY])  # says why it is denied
            return wire.ApproveResult(decision="deny")
        async with self.asking:
            self._end_text()
            lines = approval_lines(message)
            if params.diff:
                lines += render.diff_lines(params.diff, render.DIFF_SHOWN)
            shown = "".join(render.to_ansi(line, True) + "\n" for line in lines)
            if not self.err.isatty():
                for line in lines:
                    self._note(line)
            ask = render.to_ansi([("yellow", question(permissions_view.KEYS, message) + ": ")], True)
            answer = await _in_daemon_thread(_ask_tty, notify.notification(message).decode() + shown + ask)
            reason: str | None = None
            if answer[:1].lower() == "r":
                reason = answer[1:].strip() or await _in_daemon_thread(_ask_tty, render.to_ansi([("yellow", "reason: ")], True))
        # w: always for the session, f: in this folder, u: for the user (permissions_view.py).
        return permissions_view.approve_result(permissions_view.ANSWER_KEYS.get(answer[:1].lower()), reason)

    async def run(self, prompt: str, images: list[dict[str, Any]] | None = None) -> int:
        """Exit status of the turn (output_format.py names them); `--output-format json` and
        `stream-json` end with the result object on stdout."""
        fmt = self.collector.fmt
        before = await self._status(None) if self.resumed and fmt != "text" else None
        started = time.monotonic()
        code, result = await self._turn(prompt, images)
        if self.err.isatty() and time.monotonic() - started >= notify.after_seconds(self.conn.init_options):
            self.err.write(notify.notification(f"shiro-neko: the turn ended ({result.get('status')})").decode())
            self.err.flush()
        if code == EXIT_OK and self.collector.cost_limited:
            code = EXIT_COST_LIMIT
        if fmt != "text":
            sid = result.get("sessionId")
            status = await self._status(sid) if isinstance(sid, str) and sid else None
            self.collector.line(self.collector.result(result, status, before, code))
        return code

    async def _status(self, session_id: str | None) -> dict[str, Any] | None:
        try:
            return await self.conn.command(wire.STATUS, {"sessionId": session_id} if session_id else {})
        except (CommandError, ServerGone):
            return None

    async def _turn(self, prompt: str, images: list[dict[str, Any]] | None) -> tuple[int, dict[str, Any]]:
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
        except (NotImplementedError, RuntimeError):
            pass
        try:
            result = await self.conn.chat(prompt, images=images)
        except (CommandError, ServerGone) as exc:
            self._note([("red", f"shiro: error: {exc}")])
            return EXIT_ERROR, {"status": "error", "error": str(exc)}
        finally:
            try:
                loop.remove_signal_handler(signal.SIGINT)
            except (NotImplementedError, RuntimeError):
                pass
        status = result.get("status")
        text = str(result.get("text") or "")
        if self.stream_out:
            self._end_text()
        elif status == "completed" and text and self.collector.fmt == "text":
            # Made visible in a pipe too: `shiro -p … | tee log` or `| less -R` still reaches a
            # terminal, and a script has no use for a clipboard write or a cursor move.
            text = visible(text)
            self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()
        if status == "completed":
            return EXIT_OK, result
        if status == "aborted":
            self._note([("yellow", "shiro: aborted")])
            return EXIT_ABORTED, result
        self._note([("red", f"shiro: error: {result.get('error') or 'the turn failed'}")])
        return EXIT_ERROR, result

    def _interrupt(self) -> None:
        if self.interrupted:  # a second Ctrl-C: stop waiting for the server
            raise KeyboardInterrupt
        self.interrupted = True
        asyncio.ensure_future(self._abort())

    async def _abort(self) -> None:
        try:
            await self.conn.abort()
        except (CommandError, ServerGone):
            pass


async def _in_daemon_thread(fn: Any, *args: Any) -> Any:
    """Like asyncio.to_thread, but a read still blocked at exit (Ctrl-C) does not hold the exit up."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def work() -> None:
        result = fn(*args)
        try:
            loop.call_soon_threadsafe(lambda: None if future.done() else future.set_result(result))
        except RuntimeError:  # the loop has ended meanwhile
            pass

    threading.Thread(target=work, daemon=True).start()
    return await future


def _ask_tty(text: str) -> str:
    """Writes `text` (the request, then the question) and reads the answer line. What was typed
    while the answer streamed (`a` + Enter in the tty's line buffer) is dropped first: it was not
    typed as an answer to this (typed_ahead.py)."""
    try:
        with open("/dev/tty", "r+b", buffering=0) as tty:  # unbuffered: a tty cannot seek
            tty.write(text.encode())
            drop_typed_ahead(tty.fileno())
            return tty.readline().decode("utf-8", "replace").strip()
    except OSError:
        return ""
