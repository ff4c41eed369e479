"""Context messages: what changes around a conversation reaches the model as messages appended
where it changed, never by rewriting the instructions or earlier items.

The instructions and the tool list stay byte-identical for a session (agent/prompt.py), so every
request repeats the previous one's prefix and the provider's prompt cache (or a local engine's KV
cache) keeps it. The date and git status, project memory, the AGENTS.md files (one section per
file: a nested one found later is sent alone) and the task list are sections; before a request,
the sections whose text differs from what the conversation last said are appended as one user
message flagged `context` (clients do not show it as a prompt). Since they are transcript
messages, the record keeps them and a resumed session goes on from what it said; /compact drops
them with the rest, and the next request restates everything. Automatic pruning may take an old
one out of the wire view: then the current text of what the view lost is appended again.

Short-term memory's stale note (depth -1) is a section too, `<short_term_memory>`: the loop
passes the turn's text to `append_changes` before the prompt (agent/short_term_memory.py, Plan.context).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model.transcript import Message, TextPart, UserMessage
from .prompt import git_facts
from .short_term_memory import CONTEXT_TAG as SHORT_TERM_MEMORY

if TYPE_CHECKING:
    from .session import AgentSession

ENVIRONMENT = "environment_context"
TODOS = "todos"
MEMORY = "project_memory"
# A section that said something and now has nothing (the task list emptied, an AGENTS.md deleted).
GONE = "(none now)"


def instructions_tag(label: str) -> str:
    # The label is a repository path: no quote or line break may end the tag early.
    clean = "".join("?" if c in '"<>\r\n' else c for c in label)
    return f'project_instructions file="{clean}"'


def render(tag: str, body: str) -> str:
    return f"<{tag}>\n{body}\n</{tag.split(' ', 1)[0]}>"


def parse(text: str) -> tuple[str, str] | None:
    """(tag, body) of one rendered section, or None for text that is not one."""
    first, _, rest = text.partition("\n")
    if not (first.startswith("<") and first.endswith(">")):
        return None
    tag = first[1:-1]
    closing = f"\n</{tag.split(' ', 1)[0]}>"
    if not rest.endswith(closing):
        return None
    return tag, rest[: -len(closing)]


def said(messages: Sequence[Message]) -> dict[str, str]:
    """What the context messages among `messages` last said, per section."""
    out: dict[str, str] = {}
    for message in messages:
        if isinstance(message, UserMessage) and message.context:
            for part in message.content:
                parsed = parse(part.text)
                if parsed is not None:
                    out[parsed[0]] = parsed[1]
    return out


def changes(current: Sequence[tuple[str, str]], before: dict[str, str]) -> UserMessage | None:
    """The context message that brings `before` up to `current`, or None when nothing changed."""
    now = {tag: body for tag, body in current if body}
    parts = [TextPart(text=render(tag, body)) for tag, body in now.items() if before.get(tag) != body]
    # An instruction file said once stays said: `touched` (which files' folders are read) starts
    # empty in a resumed session, and a nested file not looked up again is not a deleted one.
    # Short-term memory is said only by the turn's start (`memory_section`), which knows when it went.
    parts += [
        TextPart(text=render(tag, GONE)) for tag, body in before.items()
        if tag not in now and body != GONE and not tag.startswith("project_instructions") and tag != SHORT_TERM_MEMORY
    ]
    return UserMessage(content=parts, context=True) if parts else None


def environment(session: "AgentSession", fresh: bool) -> str:
    facts = [f"Date: {_dt.date.today().isoformat()}"]
    git = git_facts(session.root, fresh=fresh)
    if git:
        facts.append(git)
    return "\n".join(facts)


async def sections(session: "AgentSession", fresh: bool) -> list[tuple[str, str]]:
    """The current sections, in the order a first context message lists them. `fresh`: a tool step
    ran since the last request, so git status is asked again (else a cached answer may do)."""
    env = await asyncio.to_thread(environment, session, fresh)  # git is a subprocess
    return [(ENVIRONMENT, env), *session.deps.context_sections(session)]


def memory_section(text: str | None, messages: Sequence[Message]) -> list[tuple[str, str]]:
    """The `<short_term_memory>` section of a turn's start, from its plan's `context`: its text,
    gone once when this session has no memory (any more), else nothing."""
    if text is None:
        return []
    if text:
        return [(SHORT_TERM_MEMORY, text)]
    return [(SHORT_TERM_MEMORY, GONE)] if said(messages).get(SHORT_TERM_MEMORY, GONE) != GONE else []


async def append_changes(session: "AgentSession", fresh: bool, extra: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """Append a context message for what changed since the transcript last said it (`extra`:
    sections only the caller knows, the turn's short-term memory); the current sections are
    returned for `restate`."""
    current = [*await sections(session, fresh), *extra]
    message = changes(current, said(session.messages))
    if message is not None:
        session.messages.append(message)
        session.changed()
    return current


def restate(session: "AgentSession", current: Sequence[tuple[str, str]], wire: Sequence[Message]) -> bool:
    """After pruning took context messages out of the wire view: append what the view no longer
    says. True when a message was appended (the view must be extended with it)."""
    message = changes(current, said(wire))
    if message is None:
        return False
    session.messages.append(message)
    session.changed()
    return True
