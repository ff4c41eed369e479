"""Slash commands in an ACP prompt: `/compact`, `/notes`, `/todos`, `/memory`, `/sessions`, `/save`,
`/effort`, `/model`, `/rewind`.

Advertised with `available_commands_update`; a prompt that starts with one runs it through the
same service and features the LSP commands call, and the answer is one agent message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable

from acp import schema

from ..errors import InvalidArguments, Refused
from ..protocol import CommandsResult, CompactArgs, RewindArgs

if TYPE_CHECKING:
    from ..service import LiveSession as AgentSession, ShiroService

Handler = Callable[["ShiroService", "AgentSession", str], Awaitable[str]]


async def _compact(service: "ShiroService", session: "AgentSession", focus: str) -> str:
    result = await service.compaction.compact(CompactArgs(sessionId=session.id, focus=focus or None))
    return f"Compacted {result.messagesBefore} messages to {result.messagesAfter}.\n\n{result.summary}"


async def _entries(service: "ShiroService", session: "AgentSession") -> str:
    entries = await service.memory.run(service.workspace_of(session), lambda m: m.entries())
    if not entries:
        return "Project memory is empty."
    return "\n".join(
        f"- **{e.kind}** {e.text} _(hits {e.hits}{'; session ' + e.session_id[:8] if e.session_id else ''})_"
        for e in entries)


async def _notes(service: "ShiroService", session: "AgentSession", _: str) -> str:
    return await _entries(service, session)


async def _todos(service: "ShiroService", session: "AgentSession", _: str) -> str:
    todos = service.todos.result(session)
    if not todos.todos:
        return "The task list is empty."
    warnings = "".join(f"\n\nwarning: {w}" for w in todos.warnings)
    return f"```\n{todos.rendered}\n```{warnings}"


async def _memory(service: "ShiroService", session: "AgentSession", _: str) -> str:
    result = await service.memory.compact(service.workspace_of(session))
    if not result.ran:
        return f"Memory left as it was: {result.reason or 'nothing to do'} ({result.before} entries)."
    # The editor has no other view of the store: the merged entries are the answer's point.
    return f"Memory compacted: {result.before} entries to {result.after}.\n\n{await _entries(service, session)}"


async def _sessions(service: "ShiroService", session: "AgentSession", _: str) -> str:
    rows = (await service.persistence.list_saved(service.workspace_of(session), 15)).sessions
    if not rows:
        return "No saved sessions in this directory yet."
    return "\n".join(f"- `{r.short_id or r.id[:8]}` {r.title or '(untitled)'} ({r.message_count} messages, {r.updated_at})" for r in rows)


async def _save(service: "ShiroService", session: "AgentSession", _: str) -> str:
    result = await service.persistence.save_command(session)
    if not result.saved:
        return f"Not saved: {result.reason or 'nothing to write'}."
    return f"Saved {result.messageCount} messages to {result.path}."


def _files_text(files: list[object]) -> str:
    mark = {"added": "+", "deleted": "-", "modified": "~"}
    shown = ", ".join(f"`{mark.get(getattr(f, 'change', ''), '~')}{getattr(f, 'path', '')}`" for f in files[:6])
    return (shown + (f" and {len(files) - 6} more" if len(files) > 6 else "")) if files else "no file changed"


async def _rewind(service: "ShiroService", session: "AgentSession", rest: str) -> str:
    rows = (await service.checkpoints.list(session)).checkpoints
    words = rest.split()
    if not words:
        if not rows:
            return "No checkpoints yet: one is recorded before each turn's first tool."
        lines = [f"{i}. {r.prompt or '(no prompt)'} ({r.createdAt}): {_files_text(list(r.files))}" for i, r in enumerate(rows, 1)]
        return "\n".join(lines) + (
            "\n\n`/rewind N` takes files and conversation back to before turn N, `/rewind N files` files only; "
            "add `force` to also restore files you changed since (their content is kept aside first).")
    pick, options = words[0], set(words[1:])
    if not pick.isdigit() or not 1 <= int(pick) <= len(rows) or options - {"files", "force"}:
        return f"Usage: `/rewind N [files] [force]` with N from 1 to {len(rows)}; `/rewind` lists them."
    chosen = rows[int(pick) - 1]
    result = await service.checkpoints.rewind(session, RewindArgs(
        sessionId=session.id, turnId=chosen.turnId, conversation="files" not in options, force="force" in options))
    out = [f"Restored {len(result.restored)} file(s)" + (": " + ", ".join(f"`{p}`" for p in result.restored) if result.restored else ".")]
    out += [f"- not restored `{c.path}`: {c.reason}" + (f" (kept at `{c.keptAt}`)" if c.keptAt else "") for c in result.conflicts]
    if result.messages is not None:
        out.append(f"The conversation the agent sees is cut back to {len(result.messages)} messages"
                   + (" (the editor's own view of it is not)." if result.prompt else "."))
    if result.prompt:
        out.append(f"Your prompt was:\n\n> {result.prompt}")
    if result.undo:
        out.append("`/rewind 1` undoes this rewind.")
    return "\n\n".join(out)


async def _effort(service: "ShiroService", session: "AgentSession", rest: str) -> str:
    result = service.set_effort(session, rest or None)
    level = result.effort or "the endpoint's default"
    return f"Reasoning effort for {result.model}: {level} (from the next request)." if rest else f"Reasoning effort for {result.model}: {level}."



async def _model(service: "ShiroService", session: "AgentSession", rest: str) -> str:
    """`/model`: the models to pick from (shiro.models); `/model NAME` (or `default`) from the next request."""
    if rest:
        result = service.set_model(session, rest, None)
        return f"Model: {result.model} (from the next request)."
    listed = await service.model_choice.list(service.settings_for(session.id), False)
    rows = [f"- `{m.id}`{' (current)' if m.id == listed.current else ''}{'' if m.source == 'endpoint' else ' (from settings)'}"
            for m in listed.models]
    why = f"\n\nThe endpoint listed none: {listed.error}." if listed.error else ""
    return "Models:\n\n" + "\n".join(rows) + why + "\n\n`/model NAME` uses one from the next request; `/model default` goes back to the setting."
COMMANDS: dict[str, tuple[str, str | None, Handler]] = {
    "compact": ("Summarise the conversation to free context (the task list stays)", "optional focus", _compact),
    "notes": ("Show the project memory", None, _notes),
    "todos": ("Show the task list", None, _todos),
    "memory": ("Compact the project memory", None, _memory),
    "sessions": ("List this directory's saved sessions", None, _sessions),
    "save": ("Write the session to disk now", None, _save),
    "effort": ("Show or set the reasoning effort", "minimal|low|medium|high|default", _effort),
    "model": ("Show the models to pick from, or use one from the next request", "NAME|default", _model),
    "rewind": ("Take the workspace (and conversation) back to before a turn; without N, list them", "N [files] [force]", _rewind),
}


def available_commands(custom: CommandsResult | None = None) -> schema.AvailableCommandsUpdate:
    """Ours, then the skills and custom commands (`shiro.commands`' rows that are not built in),
    which a prompt `/name args` runs through the turn like any prompt (features/skills.py)."""
    rows = [(name, description, hint) for name, (description, hint, _) in COMMANDS.items()]
    rows += [(c.name, c.description, c.argumentHint or ("arguments" if c.source == "command" else None))
             for c in (custom.commands if custom is not None else []) if c.source != "builtin" and c.name not in COMMANDS]
    return schema.AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            schema.AvailableCommand(
                name=name,
                description=description,
                input=schema.AvailableCommandInput(schema.UnstructuredCommandInput(hint=hint)) if hint else None,
            )
            for name, description, hint in rows
        ],
    )


def parse(prompt: str) -> tuple[str, str] | None:
    """`/name rest` when `name` is one of ours; other text (even `/usr/bin`) is a prompt."""
    if not prompt.startswith("/"):
        return None
    name, _, rest = prompt[1:].partition(" ")
    return (name, rest.strip()) if name in COMMANDS else None


async def run(service: "ShiroService", session: "AgentSession", name: str, rest: str) -> str:
    try:
        return await COMMANDS[name][2](service, session, rest)
    except (Refused, InvalidArguments) as exc:
        return f"/{name}: {exc}"
