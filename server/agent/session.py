"""One live session: its durable state (what its record saves), what it needs from outside the
agent package, and the turn queue in front of its loop.

The durable part is one Struct, `SessionState`; the attributes below that name its fields read
and write it, so the record is written from it and read into it whole (features/sessions.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Coroutine, Generic, TypeVar

import msgspec

from .checkpoints import NoCheckpoints, TurnCheckpoints
from .short_term_memory import NoShortTermMemory, TurnMemory
from .status import emit_status
from .turns import QueuedPrompt, TurnOutcome, TurnQueue
from ..model.session_state import CompactedSpan, SessionState
from ..model.transcript import Message
from ..protocol import NoticeEvent, QueuedEvent

if TYPE_CHECKING:
    from ..config import PermissionSettings, Settings
    from .events import ApprovalRequest, EventSink
    from ..state.image_store import ImageStore
    from .provider.base import Provider
    from .todos import Todo
    from .tools.base import Tool, ToolHost

#: Plays one turn of a session: (session, prompt, turn id, attachments) -> outcome. The loop's
#: `run_turn`, handed in so that this module never imports the loop (which imports this one).
RunTurn = Callable[["AgentSession", "str | None", str, list[str]], Coroutine[Any, Any, TurnOutcome]]


async def _no_loop(session: "AgentSession", prompt: str | None, turn_id: str, attachments: list[str]) -> TurnOutcome:
    raise RuntimeError("this session was built without a turn runner (SessionDeps.run_turn)")


@dataclass
class SessionDeps:
    """Everything a session needs from outside the agent package."""

    settings: Callable[[], "Settings"]
    sink: "EventSink"
    host: "ToolHost"
    provider: Callable[["Settings"], "Provider"]
    run_turn: RunTurn = _no_loop
    tools: Callable[["AgentSession"], list["Tool"]] = lambda s: []
    # (tag, text) sections of the context messages besides the environment (agent/context_messages.py).
    context_sections: Callable[["AgentSession"], list[tuple[str, str]]] = lambda s: []
    on_change: Callable[["AgentSession", bool], None] = lambda s, turn_ended: None
    record_prompt: Callable[[str], None] = lambda p: None
    short_term_memory: TurnMemory = field(default_factory=NoShortTermMemory)
    checkpoints: TurnCheckpoints = field(default_factory=NoCheckpoints)
    # Awaited as a turn starts (MCP servers still starting, restarts); returns notices to show.
    before_turn: Callable[["AgentSession"], Awaitable[list[str]]] = lambda s: _no_notices()
    # Where the session's images are kept (state/image_store.py); None: images are refused.
    images: "ImageStore | None" = None
    # The permission rules calls are judged by, from the client's `permissions` setting: with the
    # user's and the workspace's saved rules (features/permission_rules.py); "Always allow" for
    # the workspace or the user writes its rules there (OSError/ValueError when it cannot).
    rules: Callable[["PermissionSettings"], "PermissionSettings"] = lambda sent: sent
    save_rules: Callable[["AgentSession", list[str], str], None] = lambda s, rules, scope: _no_rule_files()


async def _no_notices() -> list[str]:
    return []


def _no_rule_files() -> None:
    raise OSError("this session keeps its rules in memory only")


T = TypeVar("T")


class _Durable(Generic[T]):
    """`session.<name>` is `session.state.<name>`: one place holds it, the record is made of it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, session: "AgentSession", owner: Any = None) -> T:
        value: T = getattr(session.state, self._name)
        return value

    def __set__(self, session: "AgentSession", value: T) -> None:
        setattr(session.state, self._name, value)


@dataclass(eq=False)
class AgentSession:
    state: SessionState
    deps: SessionDeps
    # What "always allow" answers cover: one key per exact call (tool_calls.allowance_key), never a whole tool.
    always_allowed: set[str] = field(default_factory=set)
    # Allow rules an "always allow" added for this session (agent/permissions.py narrowest_rules), bounded.
    permission_rules: list[str] = field(default_factory=list)
    touched: set[Path] = field(default_factory=set)  # files the agent worked on (for AGENTS.md lookup)
    # Project memory as rendered once for this session (memory is what *earlier* sessions learned).
    memory_block: str | None = None
    # The model's context window and the instructions' and tools' size in tokens, as the last
    # request found them (agent/context_window.py; shiro/status); the window notice is given once.
    context_window: int | None = None
    prefix_tokens: int = 0
    window_told: bool = False
    # The tool call waiting for the user's answer, if any (shiro/status `waiting`).
    waiting_approval: "ApprovalRequest | None" = None

    messages = _Durable[list[Message]]()
    title = _Durable[str]()
    created_at = _Durable[str]()
    input_tokens = _Durable[int]()
    output_tokens = _Durable[int]()
    cost_usd = _Durable["float | None"]()
    # Summaries of automatically pruned spans, one per span.
    span_summaries = _Durable[dict[str, str]]()
    # What side requests (span summaries, /compact, /memory) spent, part of the totals.
    side_usage = _Durable[dict[str, int]]()
    private = _Durable[bool]()  # shiro.newSession {private: true}: its short-term memory stays out of other sessions
    turns_since_refresh = _Durable[int]()  # completed turns since the last update_short_term_memory
    compacted = _Durable["list[CompactedSpan] | msgspec.UnsetType"]()  # what /compact replaced, for display only

    def __post_init__(self) -> None:
        self.root = Path(self.state.cwd)
        self.turns = TurnQueue(
            run=lambda item: self.deps.run_turn(self, item.prompt, item.turn_id, item.attachments),
            submitted=self._submitted,
            settled=lambda: emit_status(self),
        )

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def todos(self) -> list["Todo"]:
        return self.state.notebook.todos

    @todos.setter
    def todos(self, todos: list["Todo"]) -> None:
        self.state.notebook.todos = todos

    def _submitted(self, item: QueuedPrompt, waiting: int) -> None:
        if item.prompt is not None:
            self.deps.record_prompt(item.prompt)  # queued prompts are history too
        if waiting:
            self.deps.sink.event(QueuedEvent(sessionId=self.id, turnId=item.turn_id, position=waiting))
            if self.waiting_approval is not None:
                # Not queued silently behind a question the user may not see (a dismissed dialog).
                self.deps.sink.event(NoticeEvent(sessionId=self.id, turnId=item.turn_id, message=(
                    f"waiting for your answer to \"{self.waiting_approval.summary}\": this prompt runs "
                    "after that turn (answer the question, or abort the turn)")))
            emit_status(self)

    def changed(self, turn_ended: bool = False) -> None:
        self.deps.on_change(self, turn_ended)
