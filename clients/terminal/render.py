"""Plain-text rendering for the terminal client: events, task list, status, tables, the exit text.

Everything here is a pure function from protocol payloads (events and the status as protocol.py's
Structs, decoded by clients/terminal/connection.py; command results as JSON) to *lines*: lists of `(style, text)`
fragments with a style from `STYLES`. The interactive UI hands them to prompt_toolkit; `-p` turns
them into text with or without ANSI colours (`to_ansi`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from .. import protocol as wire
from ..model.checkpoint import FileChange
from ..protocol import NEVER_WRITTEN
from ..model.visible_text import visible

Fragment = tuple[str, str]
Line = list[Fragment]

# style name -> ANSI SGR parameters; the same names are prompt_toolkit style classes.
STYLES = {"": "", "dim": "2", "red": "31", "yellow": "33", "green": "32", "cyan": "36", "bold": "1", "user": "1;36"}
LEVEL_STYLE = {"normal": "green", "amber": "yellow", "red": "red"}
WIDTH = 100


def to_ansi(line: Line, color: bool) -> str:
    """The line for a terminal or a log: every fragment's text made visible first (it may be the
    model's, a tool's, a title: model/visible_text.py), then our own colours around it."""
    if not color:
        return "".join(visible(text) for _, text in line)
    out = []
    for style, text in line:
        code = STYLES.get(style, "")
        shown = visible(text)
        out.append(f"\x1b[{code}m{shown}\x1b[0m" if code else shown)
    return "".join(out)


def one_line(text: str, width: int = WIDTH) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


# -- streamed text --------------------------------------------------------------------------
class TextStream:
    """Turns `text_delta`s into whole lines; the unfinished tail is shown live by the UI."""

    def __init__(self) -> None:
        self.partial = ""

    def feed(self, text: str) -> list[str]:
        self.partial += text
        if "\n" not in self.partial:
            return []
        *lines, self.partial = self.partial.split("\n")
        return lines

    def flush(self) -> list[str]:
        """End of a text run (a tool call or the end of the turn): the tail becomes a line."""
        if not self.partial:
            return []
        line, self.partial = self.partial, ""
        return [line]


# -- events ---------------------------------------------------------------------------------
_ARG_KEYS = ("path", "file", "pattern", "query", "command", "cmd", "text", "summary", "content")


def summarize_input(tool: str, args: Any) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return one_line(args, 80)
    if not isinstance(args, dict):
        return ""
    if tool == "todo_write" and isinstance(args.get("todos"), list):
        n = len(args["todos"])
        return f"{n} task{'s' if n != 1 else ''}"
    parts = []
    for key in _ARG_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            parts.append(value)
            break
    if tool == "grep" and isinstance(args.get("path"), str) and parts and parts[0] != args["path"]:
        parts.append(args["path"])
    if not parts:
        parts = [f"{k}={v}" for k, v in args.items() if isinstance(v, (str, int, float, bool))][:2]
    return one_line(" ".join(parts), 80)


def tool_call_line(event: wire.ToolCallEvent) -> Line:
    name = event.toolName or "tool"
    summary = summarize_input(name, event.input)
    return [("dim", f"→ {name}" + (f" {summary}" if summary else ""))]


_COUNT_ONLY = {"read_file", "list_files", "grep", "recall"}  # their single line is content, not a verdict


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


_OUTPUT_TOOLS = {"run_command", "command_output", "command_stop"}  # their body is a command's output
OUTPUT_HEAD, OUTPUT_TAIL = 3, 3  # lines of a command's output shown under its call


def output_lines(body: list[str], head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL) -> list[Line]:
    """A command's output under its call, dim: the first and last few lines, each cut to one line."""
    shown = [line for line in body if line.strip()]
    if len(shown) > head + tail + 1:
        kept = [*shown[:head], f"… {len(shown) - head - tail} more lines", *shown[-tail:]]
    else:
        kept = shown
    return [[("dim", "    │ " + one_line(line, WIDTH - 6))] for line in kept]


def tool_result_lines(event: wire.ToolResultEvent, tool: str = "") -> list[Line]:
    """The verdict line, then, for a command, the first and last lines of its output."""
    first = tool_result_line(event, tool)
    if tool not in _OUTPUT_TOOLS:
        return [first]
    lines = event.output.strip().splitlines()
    if event.isError or not lines:
        return [first, *output_lines(lines[1:])]
    return [[("dim", f"  ✓ {tool}: " + one_line(lines[0], 90))], *output_lines(lines[1:])]


def tool_result_line(event: wire.ToolResultEvent, tool: str = "") -> Line:
    lines = event.output.strip().splitlines()
    label = f"{tool}: " if tool else ""
    if event.isError:
        return [("red", "  ✗ " + label + one_line(lines[0] if lines else "failed", 96))]
    if not lines:
        return [("dim", f"  ✓ {label}done")]
    if len(lines) == 1 and len(lines[0]) <= 80 and tool not in _COUNT_ONLY:
        return [("dim", f"  ✓ {label}{lines[0]}")]
    return [("dim", f"  ✓ {label}{plural(len(lines), 'line')}")]


class ToolNames:
    """Remembers which tool each call id belongs to, so results can say whose they are."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def note(self, event: wire.ToolCallEvent | wire.ToolResultEvent) -> str:
        if isinstance(event, wire.ToolCallEvent):
            self.names[event.toolCallId] = event.toolName
            return event.toolName
        return self.names.pop(event.toolCallId, "")


def event_lines(event: wire.Event, tools: ToolNames | None = None) -> list[Line]:
    """Lines for one event other than text deltas (those go through `TextStream`)."""
    if isinstance(event, wire.ToolCallEvent):
        if tools is not None:
            tools.note(event)
        return [tool_call_line(event)]
    if isinstance(event, wire.ToolResultEvent):
        return tool_result_lines(event, tools.note(event) if tools is not None else "")
    if isinstance(event, wire.NoticeEvent):
        return [[("yellow", f"! {event.message}")]]
    if isinstance(event, wire.CompactedEvent):
        return [[("dim", event.message or f"context compacted: {event.before} messages pruned to {event.after} on the wire")]]
    if isinstance(event, wire.QueuedEvent):
        return [[("dim", f"queued ({event.position})")]]
    if isinstance(event, wire.TurnEndEvent):
        if event.status == "aborted":
            return [[("yellow", "aborted")]]
        if event.status == "error":
            lines: list[Line] = [[("red", f"error: {event.error or 'the turn failed'}")]]
            if wire.SET_UP_MODEL in (event.error or ""):  # a missing or refused key: the terminal's way to set one up
                lines.append([("yellow", f"{wire.SET_UP_MODEL}: "), ("", "leave (Ctrl-D) and run "), ("bold", "shiro setup"),
                              ("dim", " (the endpoint and key)")])
            return lines
        if event.files:
            return [files_changed_line(event.files)]
    return []


def files_changed_line(files: list[FileChange], limit: int = 6) -> Line:
    """After a turn that changed files: `2 files changed: a.py, b.py (/diff to see, /undo to revert)`."""
    names = ", ".join(f.path for f in files[:limit]) + (f" and {len(files) - limit} more" if len(files) > limit else "")
    return [("cyan", f"{plural(len(files), 'file')} changed: "), ("", names), ("dim", " (/diff to see, /undo to revert)")]


DIFF_SHOWN = 40  # lines of an approval's diff shown above the question; a key pages all of it


def diff_lines(diff: str, limit: int | None = None) -> list[Line]:
    """A unified diff coloured: additions green, removals red, hunk headers cyan, file headers bold.
    Cut at `limit` lines with a last line saying how many more."""
    rows = diff.rstrip("\n").split("\n") if diff.strip() else []
    out: list[Line] = []
    for row in rows[:limit] if limit is not None else rows:
        if row.startswith(("+++", "---")):
            style = "bold"
        elif row.startswith("+"):
            style = "green"
        elif row.startswith("-"):
            style = "red"
        elif row.startswith("@@"):
            style = "cyan"
        else:
            style = "dim" if row.startswith("…") else ""
        out.append([(style, "  " + row)])
    if limit is not None and len(rows) > limit:
        out.append([("dim", f"  … {len(rows) - limit} more lines")])
    return out


# -- task list, status, cost ---------------------------------------------------------------
_MARK_STYLE = {"[x]": "green", "[~]": "cyan", "[!]": "red", "[ ]": ""}


def todo_lines(rendered: str) -> list[Line]:
    out: list[Line] = []
    for line in (rendered or "").splitlines():
        style = _MARK_STYLE.get(line[:3], "dim" if line.startswith("tasks") else "")
        out.append([(style, line)])
    return out


def gauge(status: wire.StatusPayload | None) -> Fragment:
    if status is None:
        return ("dim", "ctx  --")
    return (LEVEL_STYLE.get(status.level, "green"), f"ctx {status.contextPercent:.1f}%")


def sandbox_badge(status: wire.StatusPayload | None) -> Fragment | None:
    """`shiro/status.sandbox` when the sandbox the settings ask for is not enforced (every command
    then asks first); nothing while it holds or is set `off`."""
    if status is None or status.sandbox.enforced or status.sandbox.mode == "off":
        return None
    return ("red", f"  sandbox {status.sandbox.mode} NOT enforced")


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def cost_text(status: wire.StatusPayload | None) -> str:
    if status is None:
        return ""
    money = f"${status.costUsd:.4f}" if status.costUsd is not None else "$?"
    return f"↑{_tokens(status.inputTokens)} ↓{_tokens(status.outputTokens)} {money}"


def _side_lines(status: wire.StatusPayload) -> list[Line]:
    """The side requests' share of the figures above (summaries of pruned history, /compact, /memory)."""
    tokens_in, tokens_out = status.sideInputTokens, status.sideOutputTokens
    if not (tokens_in or tokens_out):
        return []
    money = f", ${status.sideCostUsd:.4f}" if status.sideCostUsd is not None else ""
    return [[("dim", f"    of which side requests (summaries, /compact, /memory): {tokens_in:,} in, {tokens_out:,} out{money}")]]


def cost_lines(status: wire.StatusPayload) -> list[Line]:
    cost = status.costUsd
    return [
        [("bold", "cost")],
        [("", f"  model          {status.provider}/{status.model}")],
        [("", f"  input tokens   {status.inputTokens:,}")],
        [("", f"  output tokens  {status.outputTokens:,}")],
        [("", "  cost           " + (f"${cost:.4f}" if cost is not None else "unknown (no price for this model)"))],
        *_side_lines(status),
        [("", f"  context        {status.contextTokens:,} of {status.contextThreshold:,} estimated tokens"), ("", " "), gauge(status)],
    ]


# -- sessions, notes, resume --------------------------------------------------------------
def _when(iso: Any) -> str:
    try:
        moment = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return str(iso or "")
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment.tzinfo else moment.strftime("%Y-%m-%d %H:%M")


when = _when  # the /resume picker's rows (session_picker.py)


def sessions_lines(rows: list[dict[str, Any]]) -> list[Line]:
    if not rows:
        return [[("dim", "no saved sessions in this directory yet")]]
    out: list[Line] = []
    # Each id as its shortest unique prefix (8 characters at least): what /resume and -r take.
    width = max(len(str(row.get("shortId") or row.get("id", ""))) for row in rows)
    for row in rows:
        count = int(row.get("messageCount") or 0)
        out.append([
            ("cyan", f"{str(row.get('shortId') or row.get('id', '')):<{width}}"),
            ("dim", f"  {_when(row.get('updatedAt'))}  {count:>4} msg  "),
            ("", one_line(row.get("title") or "(untitled)", 60)),
        ])
    return out


def notes_lines(entries: list[dict[str, Any]]) -> list[Line]:
    if not entries:
        return [[("dim", "project memory is empty")]]
    # Which session wrote each note (issue 20: a note may come from a workspace file that talked the
    # model into it; the session says where to look).
    return [[("dim", f"{int(e.get('hits') or 0):>3} hits  "), ("cyan", f"({e.get('kind')}) "), ("", str(e.get("text", ""))),
             ("dim", f"  · session {str(e['sessionId'])[:8]}" if e.get("sessionId") else "")] for e in entries]


MCP_STATE_STYLE = {"ready": "green", "starting": "yellow", "failed": "red", "disabled": "dim", "untrusted": "yellow"}


def mcp_lines(servers: list[dict[str, Any]]) -> list[Line]:
    """`/mcp`: one line per server (state, source, tool count), its error, then its tools."""
    if not servers:
        return [[("dim", "no MCP servers configured (the mcpServers setting, or .mcp.json in the project)")]]
    out: list[Line] = []
    for server in servers:
        state = str(server.get("state", ""))
        tools = server.get("tools") or []
        out.append([
            ("bold", str(server.get("name", ""))),
            (MCP_STATE_STYLE.get(state, ""), f"  {state}"),
            ("dim", f"  {server.get('source', '')}  {plural(len(tools), 'tool')}"),
        ])
        for line in str(server.get("error") or "").splitlines()[:8]:
            out.append([("red" if state == "failed" else "dim", f"    {one_line(line, WIDTH - 4)}")])
        for tool in tools:
            name = str(tool.get("modelName") or tool.get("name", ""))
            out.append([("cyan", f"    {name}"), ("dim", f"  {one_line(str(tool.get('description') or ''), 60)}")])
    return out


def stm_lines(result: dict[str, Any]) -> list[Line]:
    """`/stm`: this session's memory, then each other session's with its title and age."""
    out: list[Line] = []
    current = result.get("current")
    if current:
        out.append([("cyan", "this session"), ("dim", f"  {current.get('kind')}, updated {_when(current.get('updatedAt'))}")])
        out.extend([("", f"  {line}")] for line in str(current.get("text", "")).splitlines())
    else:
        out.append([("dim", "this session has no short-term memory yet")])
    for other in result.get("others") or []:
        out.append([
            ("cyan", str(other.get("sessionId", ""))[:8]),
            ("dim", f"  {_when(other.get('updatedAt'))}  "),
            ("", one_line(str(other.get("title") or "(untitled)"), 60)),
        ])
        out.extend([("dim", f"  {line}")] for line in str(other.get("text", "")).splitlines())
    if result.get("others"):
        out.append([("dim", "/stm clear <id> removes another session's memory")])
    return out


def message_text(message: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in message.get("content") or [] if isinstance(p, dict) and p.get("type") == "text")


def resumed_lines(result: dict[str, Any]) -> list[Line]:
    messages = result.get("messages") or []
    sid = str(result.get("sessionId", ""))
    head: Line = [("bold", "resumed "), ("", f'"{result.get("title") or "(untitled)"}"'), ("dim", f"  {sid[:8]}  {len(messages)} messages")]
    out = [head]
    if result.get("forkedFrom"):
        out.append([("yellow", f"! that session is open in another window; continuing in a copy ({sid[:8]})")])
    last_user = next((m for m in reversed(messages) if m.get("role") == "user" and message_text(m).strip()), None)
    last_reply = next((m for m in reversed(messages) if m.get("role") == "assistant" and message_text(m).strip()), None)
    if last_user is not None:
        pictures = len(last_user.get("images") or [])  # ImageRef: the server keeps the bytes (issue 40)
        note = f"  [{plural(pictures, 'image')}]" if pictures else ""
        out.append([("user", "› "), ("dim", one_line(message_text(last_user), 96) + note)])
    if last_reply is not None:
        out.append([("dim", one_line(message_text(last_reply), 100))])
    return out


# -- leaving ---------------------------------------------------------------------------------
def shutdown_lines(log_lines: list[str]) -> list[str]:
    """The server's shutdown log: `Saved N messages: "title"` + resume hints, or never written."""
    return [line for line in log_lines if line.startswith("Saved ") or "never written" in line or "could not be saved" in line]


def goodbye_text(log_lines: list[str], fallback: str = NEVER_WRITTEN) -> str:
    """What `shiro` prints on leaving, as the seed shows it."""
    body = "\n".join(shutdown_lines(log_lines)) or fallback
    return visible(f"Good bye.\n{body}")  # the title in it is the session's (a prompt, a resumed record)


def _files_text(files: list[dict[str, Any]], limit: int = 4) -> str:
    if not files:
        return "no file changed"
    mark = {"added": "+", "deleted": "-", "modified": "~"}
    shown = " ".join(f"{mark.get(str(f.get('change')), '~')}{f.get('path')}" for f in files[:limit])
    more = f" and {len(files) - limit} more" if len(files) > limit else ""
    return f"{len(files)} file{'s' if len(files) != 1 else ''}: {shown}{more}"


def checkpoint_lines(rows: list[dict[str, Any]]) -> list[Line]:
    """`/rewind`: the session's checkpoints oldest first, numbered for `/rewind N` (1 = the first turn)."""
    if not rows:
        return [[("dim", "no checkpoints yet: one is recorded before each turn's first tool")]]
    out: list[Line] = []
    for i, row in enumerate(rows, 1):
        prompt = str(row.get("prompt") or "")
        label = prompt if row.get("kind") != "rewind" else prompt or "rewind"
        out.append([
            ("cyan", f"{i:>3}  "),
            ("dim", f"{_when(row.get('createdAt'))}  "),
            ("yellow" if row.get("kind") == "rewind" else "", one_line(label or "(no prompt)", 50)),
            ("dim", f"  {_files_text(row.get('files') or [])}"),
        ])
    out.append([("dim", "/rewind N  files and conversation back to before turn N (1 = the first) · /rewind N files  files only · add force to restore files you changed since")])
    return out


def rewind_lines(result: dict[str, Any], undo: int = 0) -> list[Line]:
    """What a rewind did; `undo`: the number `/rewind` gives the rewind itself (the newest checkpoint)."""
    restored = result.get("restored") or []
    out: list[Line] = [[("green", f"restored {len(restored)} file{'s' if len(restored) != 1 else ''}"),
                        ("dim", ("  " + " ".join(restored[:8]) + (" …" if len(restored) > 8 else "")) if restored else "")]]
    for conflict in result.get("conflicts") or []:
        kept = f" (kept at {conflict['keptAt']})" if conflict.get("keptAt") else ""
        out.append([("yellow", f"! {conflict.get('path')}: {conflict.get('reason')}{kept}")])
    if result.get("messages") is not None:
        count = len(result["messages"])
        out.append([("dim", f"conversation cut back to {count} messages; the prompt is back in the input box" if result.get("prompt")
                     else f"conversation as it was before that rewind: {count} messages")])
    if result.get("undo") and undo:
        out.append([("dim", f"undo: /rewind {undo} (the rewind is the newest checkpoint)")])
    return out
