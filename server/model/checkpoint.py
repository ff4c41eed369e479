"""One checkpoint as a session's record keeps it: which turn, where its prompt sits in the
transcript, the task list before it, and the shadow-store commits of the workspace around it
(docs/protocol.md, "Checkpoints"; the store is state/checkpoint_store.py).

Marks are never changed in place (a later stamp makes a new one), so a record snapshot that
copies the list is a snapshot of the marks too.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from .todo import Todo

FileChangeKind = Literal["added", "modified", "deleted"]
MarkKind = Literal["turn", "rewind"]


class FileChange(msgspec.Struct):
    """`{path, change}`: a workspace-relative, `/`-separated path and what happened to it."""

    path: str
    change: FileChangeKind


class CheckpointMark(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    turn_id: str
    created_at: str
    prompt: str = ""
    # "rewind": the checkpoint a rewind recorded of what it replaced (rewinding to it undoes it).
    kind: MarkKind = "turn"
    # Index of the prompt's user message in the transcript; -1 for a turn without a prompt.
    message_index: int = -1
    todos: list[Todo] = msgspec.field(default_factory=list)
    # Commits of the shadow store: the workspace before the turn's first tool, and as the turn
    # left it. Empty when no tool ran (the turn changed no file).
    before: str = ""
    after: str = ""
    files: list[FileChange] = msgspec.field(default_factory=list)
    # Paths the turn's tools wrote that the store does not hold (.gitignore'd, over 10 MB).
    unrecorded: list[str] = msgspec.field(default_factory=list)
    # Rewind marks that cut the conversation: the blob holding what was cut (messages, todos, marks).
    conversation: str = ""
