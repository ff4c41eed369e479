"""Sessions on disk: autosave, `shiro.sessions` / `resume` / `save`, leases, and the shutdown line.

Autosave (docs/state-files.md): a trailing debounce of 400 ms, at most 2 s between saves while a
turn streams, and an immediate save when a turn ends. Writes run in one worker thread per server,
so they stay off the event loop and land in order.

Two windows on one session: whoever resumes second gets a *fork* (a copy under a new id) rather
than a read-only view, so both can carry on and neither overwrites the other. The answer says so.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..agent.session import AgentSession
from ..config import Settings
from ..errors import InvalidArguments, Refused
from ..model.transcript import pending_calls, shown
from ..protocol import NEVER_WRITTEN, NoticeEvent, ResumeResult, SaveResult, SessionsResult
from ..state.atomic import StateError
from ..state.paths import shiro_home
from ..model.timestamps import iso_utc
from ..state.session_record import SessionRecord, make_title, record_of
from ..model.session_state import SessionState
from ..session_registry import SessionRegistry
from ..state.session_store import SessionBusy, SessionStore
from ..workspaces import Workspace

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.4
MAX_GAP_S = 2.0


@dataclass
class _SaveState:
    timer: asyncio.TimerHandle | None = None
    first_change: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    dirty: bool = False  # changed since the last save began
    warned: bool = False
    # The autosave that waits for the lock: it will write the newest state, so later ones need not queue.
    waiter: object | None = None


def to_record(session: AgentSession, model: str) -> SessionRecord:
    """The session's state stamped with this save (a snapshot the writer thread encodes)."""
    now, state = iso_utc(), session.state
    return record_of(state, created_at=state.created_at or now, updated_at=now, provider="openai", model=model,
                     title=make_title(state.title) if state.title else "")


class SessionsFeature:
    """Given what it needs, not the service: the registry of open sessions (it closes the ones it
    releases from memory), the settings, how to run a saved state as a live session, what to do
    when one becomes current, and how the shutdown line says to resume."""

    def __init__(
        self,
        registry: SessionRegistry,
        settings: Callable[[], Settings],
        run_saved: Callable[[Workspace, SessionState], AgentSession],
        opened: Callable[[AgentSession], None],
        resume_lines: Callable[[str], list[str]],
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.run_saved = run_saved
        self.on_opened = opened
        self.resume_lines = resume_lines
        self.store = SessionStore(shiro_home())
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shiro-save")
        self._states: dict[str, _SaveState] = {}

    # -- autosave -------------------------------------------------------------------------
    def _state(self, session: AgentSession) -> _SaveState:
        state = self._states.get(session.id)
        if state is None:
            state = self._states[session.id] = _SaveState()
        return state

    def changed(self, session: AgentSession, turn_ended: bool) -> None:
        if not session.messages and not session.created_at:
            return  # never had a message: nothing to write (one cut to none is, see save)
        if not session.created_at:
            session.created_at = iso_utc()
        state = self._state(session)
        state.dirty = True
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        if state.timer is not None:
            state.timer.cancel()
        if turn_ended:
            delay = 0.0
        else:
            if state.first_change is None:
                state.first_change = now
            delay = min(DEBOUNCE_S, max(0.0, state.first_change + MAX_GAP_S - now))
        state.timer = loop.call_later(delay, self._fire, session, state)

    def _fire(self, session: AgentSession, state: _SaveState) -> None:
        state.timer = None  # fired: `dirty` keeps it from release until a save takes its snapshot
        asyncio.ensure_future(self._autosave(session))

    async def _autosave(self, session: AgentSession) -> None:
        state = self._state(session)
        if state.waiter is not None:
            # One already waits for the save in flight and takes its snapshot after it: a turn
            # loop faster than the disk queued one task (and one redundant write) per change.
            return
        state.waiter = token = object()
        try:
            await self.save(session)
        except Refused:
            pass  # already logged and shown once as a notice; the next change tries again
        finally:
            if state.waiter is token:  # it never took its snapshot (no messages, cancelled)
                state.waiter = None

    def _stop_timer(self, state: _SaveState) -> None:
        if state.timer is not None:
            state.timer.cancel()
            state.timer = None
        state.first_change = None

    async def save(self, session: AgentSession) -> Path | None:
        """Write the session now (in the writer thread); None when nothing was written: it never
        had a message (one rewound to none is written, if it was before: SessionStore.save)."""
        state = self._state(session)
        self._stop_timer(state)
        if not session.messages and not session.created_at:
            return None
        async with state.lock:
            state.waiter = None  # the snapshot is taken now: a change from here on queues again
            state.dirty = False
            # The session's own model (shiro.setModel over the setting), as its status shows it.
            record = to_record(session, session.deps.settings().effective_model)
            loop = asyncio.get_running_loop()
            try:
                path = await loop.run_in_executor(self._writer, self._save_owned, record)
            except StateError as exc:
                state.dirty = True  # not on disk: never released from memory as if it were
                if not state.warned:
                    state.warned = True
                    log.warning("session %s not saved: %s", session.id, exc)
                    session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId="", message=f"session not saved: {exc}"))
                raise Refused(str(exc)) from None
        self.release_idle()
        return path

    # -- memory ---------------------------------------------------------------------------
    def release_idle(self) -> None:
        """Drop from memory every session that is saved, idle and no workspace's current one, and
        give back its lease: a server that starts a new session per turn (or per `shiro -p` of a
        long-lived front end) would otherwise keep every old one, transcript and all, for ever.
        A later resume loads it from disk as usual (and may get the lease again). Sessions a
        front end holds by id (ACP editors, and LSP clients that name a session in a command:
        `SessionRegistry.pinned`) stay, as do empty ones (never saved, nothing to free)."""
        registry = self.registry
        current = registry.current_ids()
        for session in registry.all():
            if session.id in current or session.id in registry.pinned or not session.turns.idle:
                continue
            state = self._states.get(session.id)
            if state is not None and (state.dirty or state.timer is not None or state.lock.locked()):
                continue  # not on disk yet: its save calls this again
            if not session.messages or state is None:
                continue  # never saved (an empty one costs nothing, and a client may still name it)
            self._states.pop(session.id, None)
            registry.close(session.id)
            self._writer.submit(self._release_lease, session.id)  # after any write still queued

    async def let_go(self, session: AgentSession) -> None:
        """Drop an idle session from memory now and give its lease back (it is about to be
        deleted): its pending autosave is cancelled, a save in flight lands first."""
        state = self._states.pop(session.id, None)
        if state is not None:
            self._stop_timer(state)
            async with state.lock:
                pass
        self.registry.pinned.discard(session.id)
        self.registry.close(session.id)
        await asyncio.get_running_loop().run_in_executor(self._writer, self._release_lease, session.id)

    def _release_lease(self, session_id: str) -> None:
        try:
            if self.store.holds(session_id):
                self.store.release(session_id)
        except StateError as exc:  # the lease file is gone or unreadable: nothing left to give back
            log.warning("could not release the lease of session %s: %s", session_id, exc)

    def _save_owned(self, record: SessionRecord) -> Path | None:
        # The lease is taken at the first save and kept: a second window resuming it gets a fork.
        try:
            if not self.store.holds(record.id):
                self.store.acquire(record.id)
            return self.store.save(record)
        except StateError:
            raise
        except OSError as exc:  # e.g. the sessions folder replaced by a file: a clear reason, not a crash
            raise StateError(f"{exc.strerror or exc} ({exc.filename or self.store.dir})") from exc


    # -- commands -------------------------------------------------------------------------
    async def save_command(self, session: AgentSession) -> SaveResult:
        await asyncio.get_running_loop().run_in_executor(self._writer, self.store.settle)
        if not session.messages:
            return SaveResult(saved=False, messageCount=0, reason="the session has no messages, so nothing was written")
        path = await self.save(session)
        return SaveResult(saved=path is not None, messageCount=len(shown(session.messages)), path=str(path))

    async def list_saved(self, workspace: Workspace, limit: int) -> SessionsResult:
        if limit < 1:
            raise InvalidArguments("limit must be at least 1")
        rows = await asyncio.to_thread(self.store.list, workspace.root, limit)
        return SessionsResult(sessions=rows)

    async def resume(self, workspace: Workspace, prefix: str | None, latest: bool, fork: bool = False) -> ResumeResult:
        """A session runs in the workspace it was recorded in, never rewriting its `cwd`: this one,
        or another folder open in this server. Recorded elsewhere, it is refused with the way out
        (open that folder), or with `fork` continued as a copy recorded here."""
        if latest == (prefix is not None):
            raise InvalidArguments("give either an id (or unique prefix) or latest: true")
        try:
            if latest:
                session_id = await asyncio.to_thread(self.store.latest, workspace.root)
                if session_id is None:
                    raise Refused(f"no saved session in {workspace.root} yet")
            else:
                session_id = await asyncio.to_thread(self.store.resolve, prefix or "", workspace.root)
            open_here = self.registry.get(session_id)
            if open_here is not None and not fork:
                return self._opened(self._own_workspace(open_here.root) or workspace, open_here, forked_from=None)
            record = await asyncio.to_thread(self.store.load, session_id)
            forked_from = None
            own = self._own_workspace(Path(record.cwd))
            if own is not workspace and (own is None or fork):
                if not fork:
                    raise Refused(
                        f"session {session_id[:8]} belongs to {record.cwd}, not {workspace.root}: open that folder "
                        f"to resume it there, or fork it to continue a copy here (fork: true; shiro -r {session_id[:8]} --fork)"
                    )
                forked_from = session_id
                record = self.store.fork(record)
                record.cwd = str(workspace.root)
                await asyncio.to_thread(self.store.acquire, record.id)
            else:
                workspace = own
                try:
                    await asyncio.to_thread(self.store.acquire, session_id)
                except SessionBusy:
                    # Another window writes this session: carry on in a copy rather than clobber it.
                    forked_from = session_id
                    record = self.store.fork(record)
                    await asyncio.to_thread(self.store.acquire, record.id)
        except StateError as exc:
            raise Refused(str(exc)) from None
        session = self.run_saved(workspace, record)  # a record is the state it saved
        opened = self._opened(workspace, session, forked_from)
        if forked_from is not None:
            # Saved once current: a save releases saved sessions that are no workspace's current one.
            await self.save(session)
        return opened

    def _own_workspace(self, cwd: Path) -> Workspace | None:
        """The folder of this server a session recorded in `cwd` belongs to, if it is open."""
        try:
            root = cwd.resolve()
        except OSError:
            return None
        return self.registry.workspace_at(root)

    def _opened(self, workspace: Workspace, session: AgentSession, forked_from: str | None) -> ResumeResult:
        workspace.current = session
        self.on_opened(session)
        self.release_idle()  # the session this one replaces, if it is saved
        if pending_calls(session.messages) and not session.turns.running:
            # A suspended approval: ask again now; the answer runs the call and the turn goes on.
            session.turns.submit(None)
        return ResumeResult(
            sessionId=session.id,
            title=session.title,
            messages=shown(session.messages),
            todos=list(session.todos),
            forkedFrom=forked_from,
            workspace=workspace.uri,  # where it runs: the folder its record names
            compacted=list(session.compacted or []),
        )

    # -- shutdown -------------------------------------------------------------------------
    def goodbye_lines(self, session: AgentSession) -> str:
        if not session.messages:
            if session.created_at and self.store.path(session.id).exists():
                # Rewound to its start: the record holds no messages now (its rewind can be undone).
                return "Saved 0 messages: the conversation was rewound to its start."
            return NEVER_WRITTEN
        hint = self.store.resume_hint(session.id)
        count = len(shown(session.messages))  # the dialogue: context messages are the model's
        return (
            f'Saved {count} message{"s" if count != 1 else ""}: "{make_title(session.title)}"\n\n'
            "Resume it with:\n" + "\n".join(f"  {line}" for line in self.resume_lines(hint))
        )

    def _flush_all(self) -> list[str]:
        """Save every session with unsaved changes and each workspace's current one; the lines to log.

        Runs in any thread: every write goes through the one writer thread, after what is queued."""
        current = {id(w.current) for w in self.registry.workspaces.all() if w.current is not None}
        failed: dict[str, str] = {}
        for session in self.registry.all():
            state = self._states.get(session.id)
            if (session.messages or session.created_at) and (id(session) in current or (state is not None and state.dirty)):
                try:
                    self._writer.submit(self._save_owned, to_record(session, session.deps.settings().effective_model)).result()
                except StateError as exc:
                    failed[session.id] = str(exc)
        lines = []
        for workspace in self.registry.workspaces.all():
            shown = workspace.current
            if shown is not None and shown.id in failed:
                lines.append(f"session {shown.id} could not be saved: {failed[shown.id]}")
            else:
                lines.append(self.goodbye_lines(shown) if shown is not None else NEVER_WRITTEN)
        self._writer.submit(self.store.close).result()
        return lines

    async def flush(self, log_line: Callable[[str], None]) -> None:
        """Shutdown: pending saves are written now, then the seed's goodbye line per workspace."""
        # A copy: awaiting a lock lets a save or a release add or drop states meanwhile.
        for state in list(self._states.values()):
            self._stop_timer(state)
            async with state.lock:  # a save in flight lands first
                pass
        for line in await asyncio.to_thread(self._flush_all):
            log_line(line)

    def flush_sync(self, log_line: Callable[[str], None]) -> None:
        """The same when the event loop has already ended (the pipe closed without `shutdown`)."""
        for line in self._flush_all():
            log_line(line)
