"""A session's durable state: everything its record (`sessions/<uuid>.json`) holds, in one Struct.

The live session keeps its state in this Struct and the record *is* this Struct with the stamps of
a save, so nothing is copied field by field between the two: `state/session_record.py` writes a
record from it and a loaded record is a `SessionState` the session runs on. Field order is the key
order on disk (docs/state-files.md), so a record written before this split re-encodes byte for byte.
"""

from __future__ import annotations

import msgspec

from .checkpoint import CheckpointMark
from .todo import Todo
from .transcript import Message


class Notebook(msgspec.Struct):
    """What survives /compact and pruning, beside the transcript: the task list."""

    todos: list[Todo] = msgspec.field(default_factory=list)


class CompactedSpan(msgspec.Struct, rename="camel", kw_only=True):
    """Messages a /compact replaced, kept for display only: clients show them folded above the
    summary (after a reload and on resume too); no request ever carries them (the wire view is
    built from `messages` alone)."""

    compacted_at: str = ""  # ISO 8601 UTC of the /compact
    messages: list[Message] = msgspec.field(default_factory=list)


class SessionState(msgspec.Struct, rename="camel", kw_only=True):
    id: str
    created_at: str = ""  # ISO 8601 UTC; stamped when the first message arrives
    updated_at: str = ""  # ISO 8601 UTC of the last save
    cwd: str  # absolute workspace path; never rewritten (a session resumed elsewhere is forked)
    provider: str = "openai"
    model: str = ""  # the model of the last save
    title: str = ""  # the first prompt; a save writes it as one line of at most 80 characters
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # null for a model without a known price
    notebook: Notebook = msgspec.field(default_factory=Notebook)
    messages: list[Message] = msgspec.field(default_factory=list)
    # Summaries of automatically pruned spans, made once per span (context management).
    span_summaries: dict[str, str] = msgspec.field(default_factory=dict)
    # The side requests' share of inputTokens/outputTokens: {"inputTokens", "outputTokens"}.
    side_usage: dict[str, int] = msgspec.field(default_factory=dict)
    # Short-term memory: created with shiro.newSession {private: true}; the nudge's counter
    # (completed turns since the last update_short_term_memory).
    private: bool = False
    turns_since_refresh: int = 0
    # What each /compact replaced, oldest first (display only; capped by features/compaction.py).
    # Unset, not [], until a /compact: a record that never had one re-encodes byte for byte.
    compacted: list[CompactedSpan] | msgspec.UnsetType = msgspec.UNSET
    # Checkpoints and rewinds of this session, oldest first (features/checkpoints.py). Left out of
    # a record that has none, so records without them keep their bytes.
    checkpoints: list[CheckpointMark] | msgspec.UnsetType = msgspec.UNSET
    # Of input_tokens, those the provider answered from its prompt cache; and the reasoning effort
    # of the last request that set one (null after it was cleared). Left out until there is one,
    # so older records keep their bytes.
    cached_tokens: int | msgspec.UnsetType = msgspec.UNSET
    reasoning_effort: str | None | msgspec.UnsetType = msgspec.UNSET
    # "plan" or "act" once the session's mode was switched (agent/plan_mode.py): a resumed session
    # goes on in it. Left out until then, so older records keep their bytes.
    mode: str | msgspec.UnsetType = msgspec.UNSET
    # The model and effort the user picked for this session (shiro.setModel, shiro.effort), over
    # the settings; a resume picks them up again (ShiroService.make_session checks them first: the
    # record is disk input). Left out while the session follows the settings (and after "default"),
    # so a later change of the `model` setting reaches it, and older records keep their bytes.
    model_override: str | msgspec.UnsetType = msgspec.UNSET
    effort_override: str | msgspec.UnsetType = msgspec.UNSET
