"""A session as Markdown (`shiro.exportSession {format: "markdown"}`, `/export`).

What a person shares or keeps: the prompts and the answers, each tool call folded to one line (its
name and the argument that says what it touched), never a tool's output, the model's reasoning,
or the context messages the server adds for the model (`shown`). Text that looks like a credential
is blanked: the API keys the server knows, and the shapes of common tokens and `NAME=value`
assignments of secret-sounding names (a command line may carry one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from .session_state import CompactedSpan
from .transcript import AssistantMessage, Message, TextPart, ToolCallPart, ToolMessage, UserMessage, shown

TOOL_LINE_MAX = 100  # characters of a call's argument shown on its line
REDACTED = "[redacted]"
# The argument that says what a call touched, first found wins (tools' arguments: agent/tools/arguments.py).
_SHOWN_ARGUMENTS = ("path", "paths", "command", "pattern", "query", "url", "description", "symbol")
_TOKENS = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}|glpat-[A-Za-z0-9_\-]{20,})"
)
_ASSIGNED = re.compile(
    r"(?i)\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]*)(\s*[=:]\s*)(['\"]?)[^\s'\"]{4,}\3"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{12,}=*")


def redact(text: str, keys: Iterable[str] = ()) -> str:
    """`text` with the known `keys` and credential-shaped strings replaced by `[redacted]`."""
    for key in keys:
        if len(key) >= 8:
            text = text.replace(key, REDACTED)
    text = _TOKENS.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def _call_line(call: ToolCallPart, failed: bool) -> str:
    shown_arg = ""
    if isinstance(call.input, dict):
        for name in _SHOWN_ARGUMENTS:
            value: Any = call.input.get(name)
            if isinstance(value, list):
                value = ", ".join(str(v) for v in value)
            if isinstance(value, str) and value.strip():
                shown_arg = " ".join(value.split())
                break
    if len(shown_arg) > TOOL_LINE_MAX:
        shown_arg = shown_arg[: TOOL_LINE_MAX - 1] + "…"
    line = f"> `{call.tool_name}`"
    if shown_arg:
        line += " " + shown_arg.replace("`", "'")
    return line + (" (failed)" if failed else "")


def _messages(messages: Sequence[Message], out: list[str]) -> None:
    failed = {r.tool_call_id for m in messages if isinstance(m, ToolMessage) for r in m.content if r.is_error}
    heading = ""  # the last heading written: one response of several steps reads as one answer
    for message in shown(messages):
        if isinstance(message, UserMessage):
            parts = [p.text if isinstance(p, TextPart) else "*[image]*" for p in message.content]
            out += ["## User", "", "\n".join(parts).strip() or "*(empty)*", ""]
            heading = "## User"
        elif isinstance(message, AssistantMessage):
            body: list[str] = []
            for part in message.content:
                if isinstance(part, TextPart) and part.text.strip():
                    body += [part.text.strip() + (" *(declined)*" if part.refusal else ""), ""]
                elif isinstance(part, ToolCallPart):
                    body += [_call_line(part, part.tool_call_id in failed), ""]
            if body:
                # Consecutive tool lines read as one folded block.
                text = "\n".join(body).replace("\n\n> ", "\n> ")
                out += ([] if heading == "## Assistant" else ["## Assistant", ""]) + [text.strip(), ""]
                heading = "## Assistant"


def to_markdown(
    *, session_id: str, title: str, created_at: str, updated_at: str, cwd: str,
    messages: Sequence[Message], compacted: Sequence[CompactedSpan] = (), keys: Iterable[str] = (),
) -> str:
    out = [f"# {' '.join(title.split()) or 'Untitled session'}", "",
           f"- Session: `{session_id}`", f"- Workspace: `{cwd}`", f"- Created: {created_at}", f"- Updated: {updated_at}", ""]
    for span in compacted:
        out += [f"*Earlier messages, replaced by /compact at {span.compacted_at}:*", ""]
        _messages(span.messages, out)
    _messages(messages, out)
    return redact("\n".join(out).rstrip() + "\n", list(keys))
