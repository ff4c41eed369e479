"""Finding and tidying saved sessions: search (`shiro.sessions {query}`), `shiro.renameSession`,
`shiro.deleteSession`, `shiro.exportSession` (docs/protocol.md, "Sessions").

A session open somewhere is never pulled from under it: one another server (another window) holds
the lease of is refused for rename and delete with that reason; one this server shows (a
workspace's current session) or runs is refused for delete. A loaded session shown nowhere (a
client named it once, or its save is still settling) is let go from memory first.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

from ..errors import InvalidArguments, Refused
from ..model.session_markdown import to_markdown
from ..protocol import DeleteSessionResult, ExportSessionResult, RenameSessionResult, SessionsResult
from ..session_registry import SessionRegistry
from ..state.atomic import StateError
from ..state.checkpoint_store import StoreError
from ..state.session_record import make_title
from ..state.session_store import SessionBusy
from ..workspaces import Workspace
from .checkpoints import CheckpointFeature
from .sessions import SessionsFeature
from .short_term_memory import ShortTermMemoryFeature

log = logging.getLogger(__name__)

QUERY_MAX = 1000  # characters of a search query


def _elsewhere(busy: SessionBusy, hint: str, action: str) -> Refused:
    holder = f" (pid {busy.pid})" if busy.pid else ""
    return Refused(
        f"session {hint} is open in another shiro-neko window{holder}; {action} it there, "
        "or close that window (or start a new session there) first"
    )


class SessionAdminFeature:
    def __init__(
        self,
        registry: SessionRegistry,
        persistence: SessionsFeature,
        short_term_memory: ShortTermMemoryFeature,
        api_keys: Callable[[], list[str]],
        checkpoints: CheckpointFeature,
    ) -> None:
        self.checkpoints = checkpoints  # a delete ends with the store's daily clean-up (if due)
        self.registry = registry
        self.persistence = persistence
        self.store = persistence.store
        self.short_term_memory = short_term_memory
        self.api_keys = api_keys  # the keys the server knows, blanked out of an export

    async def _resolve(self, workspace: Workspace, prefix: str) -> tuple[str, str]:
        """(full id, shortest unique prefix) of a full id or unique prefix, as shiro.resume takes it."""
        wanted = prefix.strip().lower()
        empty = self.registry.get(wanted)
        if empty is not None and not empty.messages:
            raise Refused(f"session {wanted[:8]} has no messages yet, so it was never saved")
        live = [s.id for s in self.registry.all() if wanted and s.id.startswith(wanted) and s.messages]
        try:
            # A session of this server not saved yet (its autosave waits) is found all the same.
            session_id = live[0] if len(live) == 1 else await asyncio.to_thread(self.store.resolve, prefix, workspace.root)
            return session_id, await asyncio.to_thread(self.store.resume_hint, session_id)
        except StateError as exc:
            raise Refused(str(exc)) from None

    async def search(self, workspace: Workspace, query: str, limit: int) -> SessionsResult:
        if limit < 1:
            raise InvalidArguments("limit must be at least 1")
        if len(query) > QUERY_MAX:
            raise InvalidArguments(f"the query is {len(query)} characters long; give at most {QUERY_MAX}")
        try:
            rows = await asyncio.to_thread(self.store.search, workspace.root, query, limit)
        except StateError as exc:
            raise Refused(str(exc)) from None
        return SessionsResult(sessions=rows)

    async def rename(self, workspace: Workspace, prefix: str, title: str) -> RenameSessionResult:
        clean = make_title(title)  # one line, cut as titles are
        if not clean:
            raise InvalidArguments("the title is empty: give the session a name")
        session_id, hint = await self._resolve(workspace, prefix)
        live = self.registry.get(session_id)
        if live is not None:
            live.title = clean  # its next save writes it; saved now so every listing shows it
            await self.persistence.save(live)
            return RenameSessionResult(id=session_id, title=clean)
        try:
            await asyncio.to_thread(self.store.rename, session_id, clean)
        except SessionBusy as exc:
            raise _elsewhere(exc, hint, "rename") from None
        except StateError as exc:
            raise Refused(str(exc)) from None
        return RenameSessionResult(id=session_id, title=clean)

    async def delete(self, workspace: Workspace, prefix: str) -> DeleteSessionResult:
        session_id, hint = await self._resolve(workspace, prefix)
        live = self.registry.get(session_id)
        if live is not None:
            if session_id in self.registry.current_ids() or not live.turns.idle:
                raise Refused(
                    f"session {hint} is open in this window; start a new session or resume another one "
                    "before deleting it"
                )
            await self.persistence.let_go(live)
        key = await asyncio.to_thread(self.store.workspace_key_of, session_id)
        try:
            deleted = await asyncio.to_thread(self.store.delete, session_id)
        except SessionBusy as exc:
            raise _elsewhere(exc, hint, "delete") from None
        except StateError as exc:
            raise Refused(str(exc)) from None
        if key is not None:
            try:
                await asyncio.to_thread(CheckpointFeature.forget_session, key, workspace.root, session_id)
            except (StoreError, OSError) as exc:  # the record is gone; its checkpoints are only unreachable
                log.warning("checkpoints of deleted session %s not removed: %s", session_id, exc)
            else:
                self.checkpoints.tidy_workspace(key, workspace.root)
        await self.short_term_memory.clear(session_id)
        return DeleteSessionResult(deleted=deleted)

    async def export(self, workspace: Workspace, prefix: str) -> ExportSessionResult:
        session_id, _ = await self._resolve(workspace, prefix)
        live = self.registry.get(session_id)
        try:
            state = live.state if live is not None else await asyncio.to_thread(self.store.load, session_id)
        except StateError as exc:
            raise Refused(str(exc)) from None
        compacted = state.compacted if isinstance(state.compacted, list) else []
        text = to_markdown(
            session_id=session_id, title=make_title(state.title) if state.title else "", created_at=state.created_at,
            updated_at=state.updated_at, cwd=state.cwd, messages=state.messages, compacted=compacted,
            keys=[k for k in (*self.api_keys(), os.environ.get("OPENAI_API_KEY") or "") if k],
        )
        return ExportSessionResult(text=text)
