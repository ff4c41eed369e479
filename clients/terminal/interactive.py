"""The interactive terminal UI (prompt_toolkit): one prompt that stays open while turns stream.

Streamed text is printed above the prompt a line at a time; the unfinished line is shown live just
above the input. The bottom toolbar holds the task list and the context gauge. A prompt sent while
a turn runs is queued by the server (`queued (N)` in the toolbar). Keys: Esc or Ctrl-C abort the
turn and clear the queue; a second Ctrl-C (within 2 s) or Ctrl-D on an empty line leaves.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import get_app_or_none, run_in_terminal
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import ANSI, FormattedText, StyleAndTextTuples
from prompt_toolkit.history import History
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.styles import Style

from .. import protocol as wire
from ..model.workspace_files import walk_files
from . import render
from . import trust as trust_flow
from .connection import CommandError, Connection, ServerGone
from .initialize import setup_text, unconfigured
from .keys_during_output import keys_kept_during_output
from .markdown import MarkdownBlocks
from .markdown import to_ansi as to_markdown_ansi
from .approval_text import approval_lines, question, request_text
from . import permissions_view
from . import notify
from . import plan_mode
from . import session_picker
from . import image_attach
from . import custom_commands
from . import nested
from .model_view import ModelPicker
from ..model.visible_text import visible
from .typed_ahead import AnswerGate, drop_typed_ahead

STYLE = Style.from_dict({
    "dim": "fg:ansibrightblack", "red": "fg:ansired", "yellow": "fg:ansiyellow", "green": "fg:ansigreen",
    "cyan": "fg:ansicyan", "bold": "bold", "user": "bold fg:ansicyan", "prompt": "", "prompt-mark": "bold fg:ansicyan",
    "bottom-toolbar": "noreverse", "bottom-toolbar.text": "",
})
COMMANDS = {
    "/help": "this list",
    "/todos": "the task list",
    "/notes": "project memory, with hit counts",
    "/memory": "have the model merge project memory (when it has grown)",
    "/mcp": "MCP servers: their state and tools",
    "/sessions": "the last 15 sessions of this directory",
    "/resume": "/resume [id or prefix]: continue a saved session (no id: pick one, type to search)",
    "/rename": "/rename <title>: rename this session",
    "/export": "/export [path]: this session as Markdown, into a file or shown here",
    "/save": "write the session now",
    "/compact": "/compact [focus]: replace the transcript with a summary",
    "/cost": "tokens and cost of this session",
    "/stm": "short-term memory the next turn is told; /stm clear [session id] removes one",
    "/rewind": "/rewind [N] [files] [force]: take the workspace (and the conversation) back to before turn N (1 = the first)",
    "/diff": "/diff [path]: what the last turn changed",
    "/undo": "/undo [path]: put back the files the last turn changed (or one of them); the conversation stays",
    "/effort": "/effort [minimal|low|medium|high|default]: how hard the model thinks",
    "/model": "/model [N|NAME|default]: the models to pick from, or this one from the next request",
    "/reasoning": "the model's reasoning summary of this turn, unfolded",
    "/plan": "/plan [prompt]: plan mode: the model reads and plans, nothing is changed (shift+tab switches)",
    "/act": "/act [ask|auto-edit|auto]: leave plan mode (with those approvals)",
    "/start": "/start [ask|auto-edit|auto]: act mode, and the plan carried out",
    "/permissions": "the permission rules (allow/ask/deny, where each is kept); /permissions rm N removes one",
    "/new": "start a new session (the old one stays saved)",
    "/clear": "same as /new",
    "/private": "start a new private session (its short-term memory stays out of other sessions)",
    "/exit": "leave (also Ctrl-D)",
}
CTRL_C_WINDOW_S = 2.0
# The terminal's focus reports (notify.py) as two keys no keyboard here sends.
ANSI_SEQUENCES.setdefault(notify.FOCUS_IN, Keys.F23)
ANSI_SEQUENCES.setdefault(notify.FOCUS_OUT, Keys.F24)
MAX_TODO_LINES = 9
MAX_FILES = 20_000
REASONING_MAX = 20_000  # characters of a turn's reasoning summary kept for /reasoning
EFFORTS = ("minimal", "low", "medium", "high", "default")


# -- history and @file completion ------------------------------------------------------------
class PromptHistory(History):
    """The server's per-directory prompt history (newest last), deduplicated against the last entry."""

    def __init__(self, prompts: Iterable[str]) -> None:
        super().__init__()
        self._initial = [p for p in prompts if p.strip()]

    def load_history_strings(self) -> Iterable[str]:
        return reversed(self._initial)  # newest first

    def append_string(self, string: str) -> None:
        if self._loaded_strings and self._loaded_strings[0] == string:
            return
        super().append_string(string)

    def store_string(self, string: str) -> None:
        pass  # the server records prompts as it receives them


def workspace_files(root: Path) -> list[str]:
    """Files `@path` completes: the agent's own walk (same skipped folders), hidden folders left out."""
    found: list[str] = []
    for path in walk_files(root):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts[:-1]):
            continue
        found.append(rel.as_posix())
        if len(found) >= MAX_FILES:
            break
    return found


class ShiroCompleter(Completer):
    """`@path` completes workspace files; a leading `/` completes slash commands."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.custom: dict[str, str] = {}  # skills and custom commands (custom_commands.py)
        self._files: list[str] = []
        self._listed_at = -1e9

    def files(self) -> list[str]:
        if time.monotonic() - self._listed_at > 10:
            self._files, self._listed_at = workspace_files(self.root), time.monotonic()
        return self._files

    def get_completions(self, document: Any, complete_event: Any) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for name, meta in {**self.custom, **COMMANDS}.items():
                if name.startswith(before):
                    yield Completion(name, start_position=-len(before), display_meta=meta)
            return
        match = re.search(r"(?:^|\s)@([^\s@]*)$", before)
        if match is None:
            return
        typed = match.group(1).lower()
        ranked = sorted(
            (p for p in self.files() if typed in p.lower()),
            key=lambda p: (not p.lower().startswith(typed), not p.rsplit("/", 1)[-1].lower().startswith(typed), len(p), p),
        )
        for path in ranked[:50]:
            yield Completion("@" + path, start_position=-len(typed) - 1, display=visible(path))  # a file's name is the repository's


def attach_files(text: str, root: Path) -> tuple[list[str], list[str]]:
    """The workspace files named by `@path` in `text`; returns (paths, notes).

    The server reads them (open buffers first) and sends them with the prompt; the title and the
    prompt history keep only what was typed."""
    paths, notes = [], []
    for match in re.finditer(r"(?:^|(?<=\s))@([^\s@]+)", text):
        rel = match.group(1).rstrip(".,;:!?)")
        path = (root / rel).resolve()
        if rel in paths or not path.is_file() or not path.is_relative_to(root.resolve()):
            continue
        if image_attach.is_image(rel):  # the server reads it and checks it is one (issue 40)
            paths.append(rel)
            notes.append(f"attached image {rel} ({max(1, path.stat().st_size // 1024)} KB)")
            continue
        try:
            lines = len(path.read_text(encoding="utf-8").splitlines())
        except UnicodeDecodeError:
            notes.append(f"not attached: {rel} is not text")
            continue
        paths.append(rel)
        notes.append(f"attached {rel} ({render.plural(lines, 'line')})")
    return paths, notes


def setup_lines() -> list[render.Line]:
    """What to do when nothing is configured, in terminal words (docs/terminal.md "First run")."""
    first, *rest = setup_text("Leave (Ctrl-D), then either:")
    return [[("yellow", first)], *([("", line)] for line in rest)]


# -- the app --------------------------------------------------------------------------------
class Interactive:
    def __init__(self, conn: Connection, cwd: Path) -> None:
        self.conn, self.cwd = conn, cwd
        self.completer = ShiroCompleter(cwd)  # `@path`, built-in and custom `/` commands
        # A bell and OSC 9 for an approval or a long turn while the terminal is out of focus (notify.py).
        self.notifier = notify.Notifier(notify.write_terminal, notify.after_seconds(conn.init_options))
        self.session_id: str | None = None
        self.models = ModelPicker(conn.command)  # /model's last list (model_view.py)
        self.statuses: dict[str, wire.StatusPayload] = {}
        self.plan = plan_mode.PlanMode(conn.command, self.send, self.say)  # /plan, /act, /start, shift+tab
        self.picker = session_picker.SessionPicker(conn.command, self.say, self.redraw)  # /resume with no id
        self.last_status: wire.StatusPayload | None = None
        self.todos: dict[str, str] = {}
        self.stream = render.TextStream()
        self.blocks = MarkdownBlocks()
        self.tools = render.ToolNames()
        self.chats = 0  # shiro.chat requests not answered yet
        # Open questions, oldest first: (the request's text, or TRUST_TOOL; its answer). Only the
        # first is shown and answered; the next is shown when it is answered.
        self.approvals: deque[tuple[str, asyncio.Future[str | None]]] = deque()
        self.messages: dict[asyncio.Future[str | None], str] = {}
        self.gate = AnswerGate()
        self.last_ctrl_c = -1e9
        self.leaving = False
        self.tasks: set[asyncio.Task[Any]] = set()
        self.prompt_session: PromptSession[str] | None = None
        self.shown_todos = ""  # the task list as last printed: printed again only when it changes
        self.reasons: dict[asyncio.Future[str | None], str] = {}  # a denial's reason, typed after `r`
        self.diffs: dict[asyncio.Future[str | None], str] = {}  # an approval's whole diff, for `v`
        self.reason_open = False  # `r` at an approval: the input line is the reason
        self.reasoning = ""  # this turn's reasoning summary (folded into one line; /reasoning or Ctrl-O)
        self.reasoning_said = False
        self.last_turn: tuple[str, list[str]] | None = None  # the last turn that changed files: id, paths
        conn.listeners.event = self.on_event
        conn.listeners.status = self.on_status
        conn.listeners.todos = self.on_todos
        conn.listeners.message = lambda kind, message: self.say([("yellow" if kind <= 2 else "dim", message)])
        conn.listeners.approve = self.approve
        conn.listeners.approve_call = self.approve_call
        conn.listeners.gone = lambda why: self.server_gone(ServerGone(why))

    # -- output ---------------------------------------------------------------------------
    def say(self, *lines: render.Line) -> None:
        """Lines above the prompt; every fragment's text made visible (model/visible_text.py), styled after."""
        fragments: list[tuple[str, str]] = []
        for i, line in enumerate(lines):
            if i:
                fragments.append(("", "\n"))
            fragments.extend((f"class:{style}" if style else "", visible(text)) for style, text in line)
        print_formatted_text(FormattedText(fragments), style=STYLE)

    def redraw(self) -> None:
        app = get_app_or_none()
        if app is not None:
            app.invalidate()

    def _show_text(self, lines: list[str], end: bool = False) -> None:
        """Complete lines of assistant text: printed as markdown a block at a time."""
        blocks = self.blocks.feed(lines) + (self.blocks.flush() if end else [])
        if not blocks:
            return
        width = shutil.get_terminal_size().columns
        for block in blocks:
            shown = to_markdown_ansi(block, width)
            if shown:
                print_formatted_text(ANSI(shown + "\n"))  # one blank line after a block, none before

    def _flush_text(self) -> None:
        self._show_text(self.stream.flush(), end=True)

    @property
    def status(self) -> wire.StatusPayload | None:
        return self.statuses.get(self.session_id or "") or self.last_status

    @property
    def busy(self) -> bool:
        status = self.status
        return self.chats > 0 or (status is not None and (status.running or status.queued > 0))

    # -- notifications --------------------------------------------------------------------
    def on_event(self, event: wire.Event) -> None:
        if nested.parent_of(event) is not None:  # a task subagent's: indented, dim (nested.py)
            shown = nested.lines(event, self.tools)
            if shown:
                self._flush_text()
                self.say(*shown)
                self.redraw()
            return
        if isinstance(event, wire.TextDeltaEvent):
            self._show_text(self.stream.feed(event.text))
            self.redraw()
            return
        if isinstance(event, wire.TurnStartEvent):
            self.reasoning, self.reasoning_said = "", False
            self.notifier.turn_started()
            return
        if isinstance(event, wire.ReasoningDeltaEvent):
            self._fold_reasoning(event.text)
            return
        if not isinstance(event, wire.QueuedEvent):
            self._flush_text()
        if isinstance(event, wire.TurnEndEvent):
            self._drop_approvals(keep_trust=True)
            self.notifier.turn_ended(event.status)
            if event.files:
                self.last_turn = (event.turnId, [f.path for f in event.files])
        lines = render.event_lines(event, self.tools)
        if isinstance(event, wire.TurnEndEvent) and event.sessionId == self.session_id:
            lines += plan_mode.ended_lines(event, self.status)
        if lines:
            self.say(*lines)
        self.redraw()

    def on_status(self, payload: wire.StatusPayload) -> None:
        self.statuses[payload.sessionId] = payload
        self.last_status = payload
        self.redraw()

    def on_todos(self, payload: wire.TodosNotification) -> None:
        rendered = payload.rendered if payload.todos else ""
        self.todos[payload.sessionId] = rendered
        if payload.sessionId == self.session_id and rendered != self.shown_todos:
            self._show_todos(rendered)
        self.redraw()

    def _show_todos(self, rendered: str) -> None:
        """The task list, printed once each time it changes (not kept in the prompt: the prompt is
        left in the scrollback after every line sent, so the list was repeated there)."""
        self.shown_todos = rendered
        if rendered:
            self._flush_text()
            self.say(*render.todo_lines(rendered)[:MAX_TODO_LINES])

    def _fold_reasoning(self, text: str) -> None:
        """A reasoning summary: one dim line, said once per turn; /reasoning (or Ctrl-O) unfolds it."""
        self.reasoning = (self.reasoning + text)[-REASONING_MAX:]
        if not self.reasoning_said and self.reasoning.strip():
            self.reasoning_said = True
            self._flush_text()
            self.say([("dim", "thinking… (Ctrl-O or /reasoning shows it)")])

    async def approve(self, message: str, actions: list[str]) -> str | None:
        trusting = wire.TRUST in actions
        if trusting and await asyncio.to_thread(trust_flow.already_answered, self.cwd):
            return None  # "not now" before the server started: the same answer, not a second question
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._flush_text()
        self.approvals.append((wire.TRUST_TOOL if trusting else message, future))
        self.messages[future] = message
        if len(self.approvals) == 1:
            self._show_question()
        try:
            return await future
        finally:
            self.messages.pop(future, None)

    async def approve_call(self, params: wire.ApproveParams) -> wire.ApproveResult | None:
        """`shiro/approve`: the request, its diff (capped; `v` pages all of it), the question."""
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._flush_text()
        message = request_text(params)
        self.approvals.append((message, future))
        self.messages[future] = message
        if params.diff:
            self.diffs[future] = params.diff
        if len(self.approvals) == 1:
            self._show_question()
        try:
            title = await future
        finally:
            self.messages.pop(future, None)
            self.diffs.pop(future, None)
            reason = self.reasons.pop(future, None)
        return permissions_view.approve_result(title, reason)  # "always" with where its rule is kept

    def _show_question(self) -> None:
        """The first open question's request, in full, right above the prompt that asks it (the
        question is the prompt: it always comes after). Keys typed ahead and not read yet are
        dropped first: they were typed for the next prompt (typed_ahead.py)."""
        if not self.approvals:
            return
        kind, future = self.approvals[0]
        drop_typed_ahead(self._stdin_fd())
        if kind != wire.TRUST_TOOL:
            self.notifier.approval(self.messages.get(future, kind))
        self.say(*approval_lines(self.messages.get(future, kind), numbered=kind != wire.TRUST_TOOL))
        diff = self.diffs.get(future)
        if diff:
            self.say(*render.diff_lines(diff, render.DIFF_SHOWN))
        self.redraw()

    @staticmethod
    def _stdin_fd() -> int:
        import sys  # noqa: PLC0415

        try:
            return sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else -1
        except (OSError, ValueError):
            return -1

    @property
    def trust_open(self) -> bool:
        return bool(self.approvals) and self.approvals[0][0] == wire.TRUST_TOOL

    def answer(self, title: str | None) -> None:
        if not self.approvals:
            return
        kind, future = self.approvals.popleft()
        self.reason_open = False
        if not future.done():
            future.set_result(title)
        self._said_answer(kind, title, self.reasons.get(future, ""))
        self._show_question()  # the next one, if any

    def _said_answer(self, kind: str, title: str | None, reason: str = "") -> None:
        if kind == wire.TRUST_TOOL:
            said = {wire.TRUST: "  trusted", wire.DONT_TRUST: "  not trusted until these files change"}.get(title or "", f"  not now: {trust_flow.TRUST_HINT}")
        else:
            said = {"Allow": "  allowed", **permissions_view.SAID}.get(title or "", "  denied" + (f": {reason}" if reason else ""))
        self.say([("dim", said)])
        self.redraw()

    def _drop_approvals(self, keep_trust: bool = False) -> None:
        """Unanswered questions end as a deny. A turn's end (or an abort) ends its tool approvals
        only: the trust question belongs to the folder, not to a turn, and stays open."""
        kept = deque(item for item in self.approvals if keep_trust and item[0] == wire.TRUST_TOOL)
        shown = self.approvals[0][1] if self.approvals else None
        while self.approvals:
            kind, future = self.approvals.popleft()
            if not future.done() and not (keep_trust and kind == wire.TRUST_TOOL):
                future.set_result(None)
        self.approvals = kept
        self.reason_open = False
        if kept and kept[0][1] is not shown:
            self._show_question()  # a trust question that waited behind the dropped ones

    # -- prompt pieces --------------------------------------------------------------------
    def message(self) -> StyleAndTextTuples:
        fragments: StyleAndTextTuples = []
        app = get_app_or_none()
        if (self.blocks.lines or self.stream.partial) and not (app is not None and app.is_done):  # not frozen into scrollback
            for line in [*self.blocks.lines, self.stream.partial] if self.stream.partial else self.blocks.lines:
                fragments += [("", visible(line)), ("", "\n")]  # the model's unfinished text
        if self.trust_open:
            return fragments + [("class:yellow", f"{trust_flow.QUESTION_KEYS} › ")]
        if self.reason_open:
            return fragments + [("class:yellow", "deny, and tell the model why (Enter sends, Esc denies without) › ")]
        if self.picker.open and not self.approvals:
            return fragments + self.picker.fragments()
        if self.approvals:
            kind, future = self.approvals[0]
            keys = permissions_view.KEYS + (" / [v]iew diff" if future in self.diffs else "")
            keys = question(keys, self.messages.get(future, kind))
            return fragments + [("class:yellow", f"{keys} › ")]
        return fragments + [("class:prompt-mark", "› ")]

    def toolbar(self) -> StyleAndTextTuples:
        fragments: StyleAndTextTuples = []
        status = self.status
        style, gauge = render.gauge(status)
        fragments.append((f"class:{style}", gauge))
        badge = render.sandbox_badge(status)
        if badge is not None:
            fragments.append((f"class:{badge[0]}", badge[1]))
        planning = plan_mode.badge(status)
        if planning is not None:
            fragments.append((f"class:{planning[0]}", planning[1]))
        if status is not None:
            fragments.append(("class:dim", visible(f"  {status.model}  {render.cost_text(status)}")))
        if self.busy:
            fragments.append(("class:cyan", "  ● working"))
        queued = status.queued if status is not None else 0
        if queued:
            fragments.append(("class:yellow", f"  queued ({queued})"))
        if time.monotonic() - self.last_ctrl_c < CTRL_C_WINDOW_S:
            fragments.append(("class:yellow", "  press Ctrl-C again to exit"))
        elif self.busy:
            fragments.append(("class:dim", "  esc to abort"))
        return fragments

    def bindings(self) -> KeyBindings:
        kb = KeyBindings()
        self.picker_keys(kb)
        trusting = Condition(lambda: self.trust_open)
        reasoning = Condition(lambda: self.reason_open and bool(self.approvals))
        asking = Condition(lambda: bool(self.approvals)) & ~trusting & ~reasoning
        for key, title in permissions_view.ANSWER_KEYS.items():
            kb.add(key, filter=asking)(lambda event, title=title: self.answer_key(event, title))

        @kb.add("r", filter=asking)
        def _(event: Any) -> None:
            if self.gate.answers():
                self.reason_open = True
                event.current_buffer.reset()
            else:
                event.current_buffer.insert_text(event.data)

        @kb.add("v", filter=asking)
        def _(event: Any) -> None:
            diff = self.diffs.get(self.approvals[0][1]) if self.approvals else None
            if diff and self.gate.answers():
                self.spawn(self.page(diff))
            elif event.data.isprintable():
                event.current_buffer.insert_text(event.data)

        @kb.add("enter", filter=reasoning)
        def _(event: Any) -> None:
            buffer = event.current_buffer
            self.reasons[self.approvals[0][1]] = " ".join(buffer.text.split())
            buffer.reset()
            self.answer("Deny")

        # Focus reports (ESC [ I / ESC [ O, read as F23 / F24 below): approvals notify only unfocused.
        kb.add(Keys.F23)(lambda event: self.notifier.focus(True))
        kb.add(Keys.F24)(lambda event: self.notifier.focus(False))

        @kb.add("c-o")
        def _(event: Any) -> None:
            self.show_reasoning()

        @kb.add("s-tab", filter=~asking & ~trusting & ~has_completions)
        def _(event: Any) -> None:
            self.spawn(self.slash_call(self.plan.toggle(self.status)))
        # The trust question: Trust / Never (until the files change) / Not now (nothing remembered).
        for key, choice in (("y", wire.TRUST), ("t", wire.TRUST), ("n", wire.DONT_TRUST), ("enter", None)):
            kb.add(key, filter=trusting)(lambda event, choice=choice: self.answer_key(event, choice))

        @kb.add("enter", filter=asking)
        def _(event: Any) -> None:
            pass  # an approval is open: answer it first

        @kb.add("escape", eager=True)
        def _(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.complete_state:
                buffer.cancel_completion()
            elif self.picker.open and not self.approvals:
                self.picker.close()
                buffer.reset()
            elif self.approvals:  # Esc at a question denies it (docs/terminal.md); a second Esc aborts
                if self.reason_open:
                    buffer.reset()
                self.answer(None if self.trust_open else "Deny")
            elif self.busy:
                self.spawn(self.abort())

        @kb.add("c-c")
        def _(event: Any) -> None:
            now = time.monotonic()
            if now - self.last_ctrl_c < CTRL_C_WINDOW_S:
                self.leave(event.app)
                return
            self.last_ctrl_c = now
            asyncio.get_running_loop().call_later(CTRL_C_WINDOW_S + 0.05, self.redraw)
            if self.busy:
                self.spawn(self.abort())
            elif self.approvals:
                self.answer(None if self.trust_open else "Deny")
            elif event.current_buffer.text:
                event.current_buffer.reset()

        @kb.add("c-d")
        def _(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.delete()
            else:
                self.leave(event.app)

        return kb

    def picker_keys(self, kb: KeyBindings) -> None:
        """The /resume picker's keys (session_picker.py), over the prompt's own while it is open."""
        picking = Condition(lambda: self.picker.open and not self.approvals and self.picker.confirm is None)
        confirming = Condition(lambda: self.picker.open and not self.approvals and self.picker.confirm is not None)
        kb.add("up", filter=picking)(lambda event: self.picker.move(-1))
        kb.add("down", filter=picking)(lambda event: self.picker.move(1))
        kb.add("delete", filter=picking)(lambda event: self.picker.ask_delete())
        kb.add("y", filter=confirming)(lambda event: self.spawn(self.picker.delete()))

        @kb.add("<any>", filter=confirming)
        def _(event: Any) -> None:
            self.picker.confirm = None  # any other key keeps the session
            self.redraw()

        @kb.add("enter", filter=picking & ~has_completions)
        def _(event: Any) -> None:
            buffer = event.current_buffer
            chosen = self.picker.choice(buffer.text)
            self.picker.close()
            buffer.reset()
            if chosen is not None:
                self.spawn(self.slash("/resume", chosen))

    def answer_key(self, event: Any, title: str | None) -> None:
        """An answer key: it answers only after a pause in typing; in full flow (the question
        appeared mid-sentence) it is typed into the input, as meant (typed_ahead.py)."""
        # The trust question is left out: it comes at a turn's start, right after the prompt is
        # sent, not mid-stream (its unread keys are still dropped when it opens).
        if self.trust_open or self.gate.answers():
            self.answer(title)
        elif event.data.isprintable():
            event.current_buffer.insert_text(event.data)

    def leave(self, app: Any) -> None:
        self.leaving = True
        if app.is_running:
            app.exit(exception=EOFError())

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- actions --------------------------------------------------------------------------
    async def abort(self) -> None:
        self._drop_approvals(keep_trust=True)
        try:
            result = await self.conn.abort()
        except (CommandError, ServerGone) as exc:
            self.say([("red", f"abort failed: {exc}")])
            return
        cleared = int(result.get("clearedQueued") or 0)
        if cleared:
            self.say([("yellow", f"cleared {cleared} queued prompt{'s' if cleared != 1 else ''}")])

    async def send(self, text: str) -> None:
        if unconfigured(self.conn.init_options) and not self.conn.api_key:
            self.say(*setup_lines())  # not sent: it would fail, and be saved as a session of one failed prompt
            return
        attachments, notes = attach_files(text, self.cwd)
        images, image_notes = image_attach.outside_images(text)
        for note in notes + image_notes:
            self.say([("dim", note)])
        self.chats += 1
        self.redraw()
        try:
            result = await self.conn.chat(text, attachments, images)
            self.session_id = str(result.get("sessionId") or self.session_id)
        except CommandError as exc:
            if not self.leaving:
                self.say([("red", f"error: {exc}")])
        except ServerGone as exc:
            self.server_gone(exc)
        finally:
            self.chats -= 1
            self.redraw()

    async def slash(self, name: str, arg: str) -> None:
        handler = self.slash_commands().get(name)
        if handler is None and name in self.completer.custom:
            await self.send(f"{name} {arg}".rstrip())  # a skill or custom command: the server expands it
            return
        if handler is None:
            self.say([("yellow", f"unknown command {name}; /help lists them")])
            return
        try:
            await handler(arg)
        except CommandError as exc:
            self.say([("red", f"{name}: {exc}")])
        except ServerGone as exc:
            self.server_gone(exc)

    async def slash_call(self, call: Awaitable[None]) -> None:
        """A command outside a typed line (a key binding), its errors said as a slash command's are."""
        try:
            await call
        except CommandError as exc:
            self.say([("red", str(exc))])
        except ServerGone as exc:
            self.server_gone(exc)

    def server_gone(self, exc: Exception) -> None:
        if self.leaving:
            return
        self.say([("red", f"error: {exc}")])
        app = get_app_or_none()
        self.leaving = True
        if app is not None:
            self.leave(app)

    async def handle(self, text: str) -> None:
        """Runs in the background, so the prompt is back at once (a prompt sent now is queued)."""
        text = text.strip()
        if not text:
            return
        if text in ("/exit", "/quit"):
            self.leaving = True
        elif text.startswith("/"):
            name, _, rest = text.partition(" ")
            self.spawn(self.slash(name, rest.strip()))
        else:
            self.spawn(self.send(text))

    # -- slash commands -------------------------------------------------------------------
    def slash_commands(self) -> dict[str, Callable[[str], Awaitable[None]]]:
        return {
            "/help": self.cmd_help, "/todos": self.cmd_todos, "/notes": self.cmd_notes, "/memory": self.cmd_memory,
            "/mcp": self.cmd_mcp,
            "/sessions": self.cmd_sessions, "/resume": self.cmd_resume, "/save": self.cmd_save,
            "/rename": self.cmd_rename, "/export": self.cmd_export,
            "/compact": self.cmd_compact, "/cost": self.cmd_cost, "/new": self.cmd_new, "/clear": self.cmd_new, "/private": self.cmd_private,
            "/stm": self.cmd_stm, "/rewind": self.cmd_rewind,
            "/diff": self.cmd_diff, "/undo": self.cmd_undo, "/effort": self.cmd_effort, "/reasoning": self.cmd_reasoning,
            "/plan": self.plan.plan, "/act": self.plan.act, "/start": self.plan.start,
            "/permissions": self.cmd_permissions, "/model": self.cmd_model,
        }

    async def cmd_help(self, _: str) -> None:
        self.say(*[[("cyan", f"{name:<11}"), ("", meta)] for name, meta in {**COMMANDS, **self.completer.custom}.items()],
                 [("dim", "@path attaches a workspace file · ↑/↓ prompt history · Esc/Ctrl-C abort · Ctrl-C twice or Ctrl-D leave")])

    async def cmd_todos(self, _: str) -> None:
        result = await self.conn.todos()
        rendered = str(result.get("rendered") or "") if result.get("todos") else ""
        self.shown_todos = rendered  # shown now: a notification with the same list is not repeated
        self.say(*(render.todo_lines(rendered) or [[("dim", "no tasks")]]))
        for warning in result.get("warnings") or []:
            self.say([("yellow", f"! {warning}")])

    async def cmd_notes(self, _: str) -> None:
        self.say(*render.notes_lines(await self.conn.notes()))

    async def cmd_mcp(self, _: str) -> None:
        self.say(*render.mcp_lines(await self.conn.mcp()))

    async def cmd_memory(self, _: str) -> None:
        self.say([("dim", "compacting project memory…")])
        result = await self.conn.memory()
        if result.get("ran"):
            self.say([("green", f"project memory compacted: {result.get('before')} → {result.get('after')} entries")])
        else:
            self.say([("dim", f"nothing done: {result.get('reason') or 'no change needed'} ({result.get('before')} entries)")])

    async def cmd_sessions(self, _: str) -> None:
        self.say(*render.sessions_lines(await self.conn.sessions(15)))

    async def cmd_resume(self, arg: str) -> None:
        if not arg:
            self.picker.start()
            return
        if self.busy:
            await self.abort()
        result = await self.conn.resume(arg)
        self.session_id = str(result.get("sessionId"))
        self.say(*render.resumed_lines(result))

    async def cmd_rename(self, title: str) -> None:
        self.say(*await session_picker.rename_lines(self.conn.command, self.session_id, title))

    async def cmd_export(self, path: str) -> None:
        self.say(*await session_picker.export_lines(self.conn.command, self.session_id, path, self.cwd))

    async def cmd_save(self, _: str) -> None:
        result = await self.conn.save()
        if result.get("saved"):
            self.say([("green", f"saved {result.get('messageCount')} messages"), ("dim", f"  {result.get('path', '')}")])
        else:
            self.say([("dim", str(result.get("reason") or "nothing to save"))])

    async def cmd_compact(self, focus: str) -> None:
        self.say([("dim", "compacting the transcript…")])
        try:
            result = await self.conn.compact(focus or None)
        except CommandError as exc:
            if exc.not_defined:
                self.say([("yellow", f"this server has no /compact yet ({wire.COMPACT} is not defined)")])
                return
            raise
        self.say([("green", f"compacted: {result.get('messagesBefore')} messages → {result.get('messagesAfter')}")])
        if result.get("summary"):
            self.say([("dim", render.one_line(str(result["summary"]), 300))])

    async def cmd_stm(self, arg: str) -> None:
        action, _, target = arg.partition(" ")
        if action == "clear":
            result = await self.conn.stm_clear(target.strip() or None)
            whose = f"session {target.strip()[:8]}'s" if target.strip() else "this session's"
            self.say([("green", f"cleared {whose} short-term memory")] if result.get("cleared") else [("dim", "nothing to clear")])
        elif action:
            self.say([("yellow", "usage: /stm  or  /stm clear [session id]")])
        else:
            self.say(*render.stm_lines(await self.conn.stm()))

    async def cmd_rewind(self, arg: str) -> None:
        words = arg.split()
        # Numbered oldest first (1 = the first turn), as "before turn N" reads; the server lists newest first.
        listed = list(reversed((await self.conn.command(wire.CHECKPOINTS, {})).get("checkpoints") or []))
        if not words:
            self.say(*render.checkpoint_lines(listed))
            return
        pick, options = words[0], set(words[1:])
        unknown = options - {"files", "force"}
        if not pick.isdigit() or not 1 <= int(pick) <= len(listed) or unknown:
            self.say([("yellow", f"usage: /rewind N [files] [force]   (N from 1 to {len(listed)}; /rewind lists them)")])
            return
        if self.busy:
            self.say([("yellow", "a turn is running: Esc aborts it, then /rewind")])
            return
        chosen = listed[int(pick) - 1]
        args = {"turnId": chosen["turnId"], "conversation": "files" not in options, "force": "force" in options}
        result = await self.conn.command(wire.REWIND, args)
        undo = len((await self.conn.command(wire.CHECKPOINTS, {})).get("checkpoints") or []) if result.get("undo") else 0
        self.say(*render.rewind_lines(result, undo))
        self.last_turn = None
        prompt = str(result.get("prompt") or "")
        if prompt and self.prompt_session is not None:
            # Handed back for the input box: edit it and send it again, or clear it.
            self.prompt_session.default_buffer.text = prompt
            self.prompt_session.default_buffer.cursor_position = len(prompt)
            self.redraw()

    async def _changed_turn(self) -> tuple[str, list[str]] | None:
        """The last turn that changed files: this run's, else the newest such checkpoint."""
        if self.last_turn is not None:
            return self.last_turn
        for row in (await self.conn.command(wire.CHECKPOINTS, {})).get("checkpoints") or []:
            if row.get("kind") != "rewind" and row.get("files"):
                return str(row["turnId"]), [str(f.get("path")) for f in row["files"]]
        return None

    async def cmd_diff(self, path: str) -> None:
        turn = await self._changed_turn()
        if turn is None:
            self.say([("dim", "no turn has changed a file yet")])
            return
        args: dict[str, Any] = {"turnId": turn[0], **({"path": path} if path else {})}
        result = await self.conn.command(wire.TURN_DIFF, args)
        diff = str(result.get("diff") or "")
        if not diff.strip():
            self.say([("dim", f"no change to {path} in the last turn" if path else "the last turn left no difference")])
            return
        self.say(*render.diff_lines(diff))

    async def cmd_undo(self, path: str) -> None:
        turn = await self._changed_turn()
        if turn is None:
            self.say([("dim", "no turn has changed a file yet: nothing to undo")])
            return
        if self.busy:
            self.say([("yellow", "a turn is running: Esc aborts it, then /undo")])
            return
        turn_id, paths = turn
        if path and path not in paths:
            self.say([("yellow", f"the last turn did not change {path}; it changed {', '.join(paths)}")])
            return
        args: dict[str, Any] = {"turnId": turn_id, "conversation": False, **({"paths": [path]} if path else {})}
        self.say(*render.rewind_lines(await self.conn.command(wire.REWIND, args)))
        left = [p for p in paths if path and p != path]
        self.last_turn = (turn_id, left) if left else None

    async def cmd_effort(self, arg: str) -> None:
        if arg and arg not in EFFORTS:
            self.say([("yellow", f"usage: /effort [{'|'.join(EFFORTS)}]")])
            return
        result = await self.conn.command(wire.EFFORT, {"effort": arg} if arg else {})
        effort = result.get("effort")
        said = f"reasoning effort {effort}" if effort else "reasoning effort: the endpoint's default"
        self.say([("green" if arg else "", said), ("dim", f"  ({result.get('model')}{', from the next request' if arg else ''})")])

    async def cmd_model(self, arg: str) -> None:
        self.say(*await self.models.run(arg))

    async def cmd_permissions(self, arg: str) -> None:
        self.say(*await permissions_view.run(self.conn.command, arg))

    async def cmd_reasoning(self, _: str) -> None:
        self.show_reasoning()

    def show_reasoning(self) -> None:
        if not self.reasoning.strip():
            self.say([("dim", "no reasoning summary in this turn")])
            return
        self.say(*[[("dim", "  " + line)] for line in self.reasoning.strip().splitlines()])

    async def page(self, diff: str) -> None:
        """`v` at an approval: the whole diff in a pager (less, its shell escapes off), else printed."""
        lines = render.diff_lines(diff)
        pager = shutil.which("less")
        if pager is None:
            self.say(*lines)
            return
        text = "\n".join(render.to_ansi(line, True) for line in lines) + "\n"
        env = {**os.environ, "LESSSECURE": "1"}
        await run_in_terminal(lambda: subprocess.run([pager, "-R"], input=text, text=True, env=env, check=False), in_executor=True)

    async def cmd_cost(self, _: str) -> None:
        self.say(*render.cost_lines(await self.conn.status()))

    async def cmd_new(self, _: str, private: bool = False) -> None:
        if self.busy:
            await self.abort()
        result = await self.conn.new_session(private=private)
        self.session_id = str(result.get("sessionId"))
        kind = "private session" if private else "session"
        self.say([("dim", f"new {kind} {self.session_id[:8]} (the previous one stays saved)")])

    async def cmd_private(self, arg: str) -> None:
        await self.cmd_new(arg, private=True)

    # -- main loop ------------------------------------------------------------------------
    async def run(self, resumed: dict[str, Any] | None) -> list[str]:
        """Runs until the user leaves; returns the server's shutdown log lines."""
        if resumed is not None:
            self.session_id = str(resumed.get("sessionId"))
        try:
            prompts = await self.conn.history()
        except CommandError:
            prompts = []
        status = await self.conn.status()  # also makes the workspace's current session
        self.completer.custom = await custom_commands.load(self.conn, set(COMMANDS))
        self.session_id = self.session_id or status.sessionId
        self.on_status(status)
        self.say([("bold", "shiro-neko"), ("dim", f"  {status.model} · {self.cwd} · /help · Esc aborts · Ctrl-D leaves")])
        if resumed is not None:
            self.say(*render.resumed_lines(resumed))
        if unconfigured(self.conn.init_options) and not self.conn.api_key:
            self.say(*setup_lines())
        session: PromptSession[str] = PromptSession(
            message=self.message, bottom_toolbar=self.toolbar, history=PromptHistory(prompts),
            completer=self.completer, complete_while_typing=True, key_bindings=self.bindings(),
            style=STYLE, enable_history_search=False, reserve_space_for_menu=6,
        )
        self.prompt_session = session
        # Every change to the input is a keystroke the gate counts (typing in full flow).
        session.default_buffer.on_text_changed += lambda _: self.gate.typed()
        session.default_buffer.on_text_changed += lambda buffer: self.picker.typed(buffer.text)
        notify.write_terminal(notify.FOCUS_REPORTING_ON)
        with keys_kept_during_output(), patch_stdout(raw=True):
            while not self.leaving:
                try:
                    text = await session.prompt_async()
                except (EOFError, KeyboardInterrupt):
                    break
                await self.handle(text)
        self._drop_approvals()
        notify.write_terminal(notify.FOCUS_REPORTING_OFF)
        lines = await self.conn.close()
        for task in list(self.tasks):
            task.cancel()
        return lines
