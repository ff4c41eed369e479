"""Checkpoints and rewind: `shiro.checkpoints`, `shiro.rewind`, and the turn's hooks that record
(docs/protocol.md, "Checkpoints"; docs/checkpoints.md).

A turn's mark is made when it starts (the prompt's place in the transcript, the task list); the
workspace is recorded in the shadow store just before its first tool and again when it ends, so
what the turn changed (its edits and whatever its commands did) is the difference of two commits,
and a file that differs from what the agent last left is the user's change: a conflict.

Every store call runs in a worker thread (git is blocking); only the editor's buffers are written
from the event loop, through the host's `apply_text`, the same path as the agent's edits.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import msgspec

from ..agent.session import AgentSession
from ..agent.status import emit_status
from ..agent.tools.apply_patch import written_paths
from ..errors import Refused
from ..model.checkpoint import CheckpointMark, FileChange, FileChangeKind
from ..model.todo import Todo
from ..model.transcript import AssistantMessage, Message, TextPart, ToolCallPart, UserMessage, shown
from .. import protocol as wire
from ..model.unified_diff import binary_lines, capped, diff_lines
from ..protocol import (
    Checkpoint,
    CheckpointsResult,
    NoticeEvent,
    RewindArgs,
    RewindConflict,
    RewindResult,
    TurnDiffArgs,
    TurnDiffResult,
)
from ..state.atomic import utc_digits
from ..state.checkpoint_store import (
    MAX_FILE_BYTES,
    Change,
    CheckpointStore,
    Entry,
    StoreError,
    restore_file,
)
from ..state.paths import shiro_home, workspace_key
from ..model.ids import new_uuid7
from ..model.timestamps import iso_utc

if TYPE_CHECKING:
    from ..agent.session import AgentSession

log = logging.getLogger(__name__)



class _Replaced(msgspec.Struct):
    """What a conversation rewind replaced, kept as one blob in the store (its undo)."""

    messages: list[Message]
    todos: list[Todo]
    marks: list[CheckpointMark]


_replaced_encoder = msgspec.json.Encoder()
_replaced_decoder = msgspec.json.Decoder(_Replaced)


def marks_of(session: AgentSession) -> list[CheckpointMark]:
    marks = session.state.checkpoints
    return [] if isinstance(marks, msgspec.UnsetType) else marks


def _set_marks(session: AgentSession, marks: list[CheckpointMark]) -> None:
    session.state.checkpoints = marks


def _session_ref(session_id: str) -> str:
    return f"refs/sessions/{session_id}"


def _kind(change: Change) -> FileChangeKind:
    return "added" if change.old is None else "deleted" if change.new is None else "modified"


@dataclass
class _Plan:
    """A rewind's file work, decided in the store's thread from the commits alone."""

    safety: str = ""  # the workspace as the rewind found it (its undo)
    restore: dict[str, Entry | None] = field(default_factory=dict)  # path -> content before (None: absent)
    current: dict[str, Entry | None] = field(default_factory=dict)  # path -> content now
    conflicts: list[RewindConflict] = field(default_factory=list)
    forced: dict[str, str] = field(default_factory=dict)  # path -> reason, restored anyway (force)
    contents: dict[str, bytes] = field(default_factory=dict)


class CheckpointFeature:
    def __init__(self, announce_todos: "Callable[[AgentSession], None]") -> None:
        self.announce_todos = announce_todos  # a rewind changed the task list: clients show it
        self._stores: dict[Path, CheckpointStore] = {}
        self._tidying: set[asyncio.Task[bool]] = set()  # clean-ups under way (awaited by stop)

    def store(self, root: Path) -> CheckpointStore:
        store = self._stores.get(root)
        if store is None:
            store = self._stores[root] = CheckpointStore(shiro_home(), workspace_key(root), root)
        return store

    @staticmethod
    def forget_session(key: str, root: Path, session_id: str) -> bool:
        """Delete the ref that holds a session's checkpoints in workspace `key`'s store
        (shiro.deleteSession); `root`: any existing folder for git to run in. Blocking (git)."""
        return CheckpointStore(shiro_home(), key, root).drop_ref(_session_ref(session_id))

    def tidy(self, store: CheckpointStore) -> None:
        """The store's daily clean-up (`prune_if_due`: a no-op but once a day), in a worker thread
        once the caller's work is done: nobody waits for it (a turn that starts meanwhile waits
        for the store's lock at its first tool). Called at a turn's end and after a delete."""
        task = asyncio.ensure_future(asyncio.to_thread(store.prune_if_due))
        self._tidying.add(task)
        task.add_done_callback(self._tidying.discard)

    def tidy_workspace(self, key: str, root: Path) -> None:
        """`tidy` of workspace `key`'s store (a deleted session's, maybe not this window's)."""
        self.tidy(CheckpointStore(shiro_home(), key, root))

    async def stop(self) -> None:
        """Shutdown: a clean-up under way finishes (its thread cannot be stopped: git is holding
        the store's lock)."""
        await asyncio.gather(*self._tidying, return_exceptions=True)

    # -- the turn's hooks ------------------------------------------------------------------------
    def turn_started(self, session: AgentSession, turn_id: str, prompt: str | None) -> None:
        mark = CheckpointMark(
            turn_id=turn_id,
            created_at=iso_utc(),
            prompt=prompt or "",
            message_index=len(session.messages) - 1 if prompt is not None else -1,
            todos=list(session.todos),
        )
        _set_marks(session, marks_of(session) + [mark])
        session.changed()

    async def before_tools(self, session: AgentSession, turn_id: str) -> None:
        mark = self._mark(session, turn_id)
        if mark is None or mark.before:
            return
        snapshot = await self._shielded(session, lambda store: store.snapshot(_session_ref(session.id), f"before turn {turn_id}"))
        if snapshot is not None:
            self._replace(session, turn_id, before=snapshot.commit)

    async def turn_ended(self, session: AgentSession, turn_id: str) -> list[FileChange]:
        mark = self._mark(session, turn_id)
        if mark is None or not mark.before or mark.after:
            return []
        written = _written_paths(session, mark)

        def record(store: CheckpointStore) -> tuple[str, list[FileChange], list[str]]:
            snapshot = store.snapshot(_session_ref(session.id), f"after turn {turn_id}")
            changes = store.changes(mark.before, snapshot.commit)
            held = store.files(snapshot.commit, written)
            unrecorded = sorted(p for p in written if p not in held and (session.root / p).is_file())
            return snapshot.commit, [FileChange(c.path, _kind(c)) for c in changes], unrecorded

        done = await self._shielded(session, record)
        if done is not None:
            after, files, unrecorded = done
            self._replace(session, turn_id, after=after, files=files, unrecorded=unrecorded)
            self.tidy(self.store(session.root))
            return files
        return []

    async def amend(self, session: AgentSession, turn_id: str) -> list[FileChange]:
        """A change that belongs to a turn already ended (an inline edit accepted after its turn,
        features/inline_edit.py): record the turn's end again, so its files include it."""
        mark = self._mark(session, turn_id)
        if mark is not None and mark.after:
            self._replace(session, turn_id, after="", files=[], unrecorded=[])
        return await self.turn_ended(session, turn_id)

    async def _shielded(self, session: AgentSession, work):  # type: ignore[no-untyped-def]
        """Run `work(store)` under the store's lock in a thread; an abort meanwhile still lets it
        finish (a half-recorded checkpoint is worse than a late one). None when it failed."""
        store = self.store(session.root)

        def locked():  # type: ignore[no-untyped-def]
            with store.locked():
                return work(store)

        task = asyncio.ensure_future(asyncio.to_thread(locked))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            try:
                await task
            except Exception:
                pass
            raise
        except StoreError as exc:
            log.warning("checkpoint not recorded: %s", exc)
            self._notice(session, f"checkpoint not recorded: {exc}")
            return None

    def _notice(self, session: AgentSession, message: str) -> None:
        marks = marks_of(session)
        turn_id = marks[-1].turn_id if marks else ""
        session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=message))

    def _mark(self, session: AgentSession, turn_id: str) -> CheckpointMark | None:
        return next((m for m in reversed(marks_of(session)) if m.turn_id == turn_id), None)

    def _replace(self, session: AgentSession, turn_id: str, **changes: object) -> None:
        _set_marks(session, [msgspec.structs.replace(m, **changes) if m.turn_id == turn_id else m for m in marks_of(session)])
        session.changed()

    # -- shiro.checkpoints -------------------------------------------------------------------------
    async def list(self, session: AgentSession) -> CheckpointsResult:
        marks = marks_of(session)
        pending = [(i, m) for i, m in enumerate(marks) if m.before and not m.after and not session.turns.running]
        extra: dict[int, list[FileChange]] = {}
        if pending:
            # A turn cut short by a crash has no "after": what it changed runs to the next checkpoint.
            def diff(store: CheckpointStore) -> dict[int, list[FileChange]]:
                found: dict[int, list[FileChange]] = {}
                for i, m in pending:
                    upto = next((n.before for n in marks[i + 1:] if n.before), "") or store.resolve(_session_ref(session.id))
                    if upto and store.has(m.before):
                        found[i] = [FileChange(c.path, _kind(c)) for c in store.changes(m.before, upto)]
                return found

            extra = await self._shielded(session, diff) or {}
        rows = [
            Checkpoint(
                turnId=m.turn_id, prompt=m.prompt, createdAt=m.created_at, files=extra.get(i, m.files),
                kind=m.kind, conversation=m.kind == "rewind" or _prompt_in_place(session, m),
            )
            for i, m in enumerate(marks)
        ]
        return CheckpointsResult(checkpoints=rows[::-1])

    # -- shiro.turnDiff ----------------------------------------------------------------------------
    async def turn_diff(self, session: AgentSession, args: TurnDiffArgs) -> TurnDiffResult:
        marks = marks_of(session)
        index = next((i for i, m in enumerate(marks) if m.turn_id == args.turnId), None)
        if index is None:
            raise Refused(f"no checkpoint {args.turnId!r} in session {session.id}; {wire.CHECKPOINTS} lists them")
        mark = marks[index]
        if not mark.before:
            return TurnDiffResult(turnId=mark.turn_id, files=[], diff="", truncated=False)
        wanted = _relative(session, args.path) if args.path is not None else None

        def build(store: CheckpointStore) -> tuple[list[FileChange], list[str]]:
            if not store.has(mark.before):
                raise StoreError(f"the checkpoint of {mark.prompt or mark.turn_id!r} is no longer in the store")
            # A turn cut short (no "after"): what it changed runs to the next checkpoint, as in list().
            upto = mark.after or next((n.before for n in marks[index + 1:] if n.before), "") or store.resolve(_session_ref(session.id))
            changes = [c for c in store.changes(mark.before, upto) if wanted is None or c.path == wanted]
            contents = store.blobs([e.sha for c in changes for e in (c.old, c.new) if e is not None])
            lines: list[str] = []
            for c in changes:
                old = None if c.old is None else contents.get(c.old.sha, b"")
                new = None if c.new is None else contents.get(c.new.sha, b"")
                try:
                    lines += diff_lines(c.path, None if old is None else old.decode("utf-8"), None if new is None else new.decode("utf-8"))
                except UnicodeDecodeError:
                    lines += binary_lines(c.path)
            return [FileChange(c.path, _kind(c)) for c in changes], lines

        files, lines = await self._checked(session, build, "turn diff")
        if wanted is not None and not files:
            raise Refused(f"turn {args.turnId!r} did not change {args.path!r}; it changed: {', '.join(f.path for f in mark.files) or 'nothing'}")
        diff, truncated = capped(lines, wire.DIFF_CAP)
        return TurnDiffResult(turnId=mark.turn_id, files=files, diff=diff, truncated=truncated)

    # -- shiro.rewind ------------------------------------------------------------------------------
    async def rewind(self, session: AgentSession, args: RewindArgs) -> RewindResult:
        if session.turns.running or session.turns.queued:
            raise Refused("a turn is running; abort it before rewinding")
        marks = marks_of(session)
        index = next((i for i, m in enumerate(marks) if m.turn_id == args.turnId), None)
        if index is None:
            raise Refused(f"no checkpoint {args.turnId!r} in session {session.id}; {wire.CHECKPOINTS} lists them")
        target = marks[index]
        only = _only_paths(session, target, args.paths) if args.paths is not None else None
        # "Undo" of some files (paths): files only, whatever `conversation` says.
        cut = only is None and args.conversation and (target.kind == "rewind" and bool(target.conversation) or target.kind == "turn")
        if cut and target.kind == "turn" and not _prompt_in_place(session, target):
            raise Refused("that prompt is no longer in the conversation as it was (compacted); rewind with conversation: false to restore its files")
        recorded = [m for m in marks[index:] if m.before]
        label = utc_digits(micro=True)
        plan = _Plan()
        if args.files and recorded:
            plan = await self._checked(session, lambda store: _plan(store, session, recorded, marks[index:], args.force, label, only))
            await self._check_buffers(session, plan, args.force)
            await self._checked(session, lambda store: _write_disk(store, session, plan, label, self._open_paths(session, plan)))
            await self._restore_buffers(session, plan)
        restored = sorted(plan.restore)
        prompt = target.prompt if cut and target.kind == "turn" else ""
        if not restored and not cut:
            return RewindResult(sessionId=session.id, restored=[], conflicts=plan.conflicts, prompt=prompt)
        undo = await self._record_rewind(session, target, plan, cut)
        result = RewindResult(sessionId=session.id, restored=restored, conflicts=plan.conflicts, prompt=prompt, undo=undo)
        if cut:
            result.messages, result.todos = shown(session.messages), list(session.todos)
            self.announce_todos(session)
            emit_status(session)
        return result

    async def _checked(self, session: AgentSession, work, what: str = "rewind"):  # type: ignore[no-untyped-def]
        store = self.store(session.root)

        def locked():  # type: ignore[no-untyped-def]
            with store.locked():
                return work(store)

        try:
            return await asyncio.to_thread(locked)
        except StoreError as exc:
            raise Refused(f"{what} failed: {exc}") from None

    def _open_paths(self, session: AgentSession, plan: _Plan) -> set[str]:
        host = session.deps.host
        return {p for p in plan.restore if host.open_document_text(session.root / p) is not None}

    async def _check_buffers(self, session: AgentSession, plan: _Plan, force: bool) -> None:
        """A buffer with unsaved changes is the user's edit too: a conflict unless forced."""
        host = session.deps.host
        for path in list(plan.restore):
            text = host.open_document_text(session.root / path)
            now = plan.current.get(path)
            disk = plan.contents.get(now.sha, b"") if now is not None else b""
            if text is None or text.encode("utf-8") == disk:
                continue
            if force:
                plan.forced[path] = "unsaved changes in the editor"
                plan.contents[f"buffer:{path}"] = text.encode("utf-8")
            else:
                del plan.restore[path]
                plan.conflicts.append(RewindConflict(path=path, reason="unsaved changes in the editor"))

    async def _restore_buffers(self, session: AgentSession, plan: _Plan) -> None:
        host = session.deps.host
        for path, entry in plan.restore.items():
            if entry is None or host.open_document_text(session.root / path) is None:
                continue
            try:
                text = plan.contents[entry.sha].decode("utf-8")
            except UnicodeDecodeError:
                continue  # written on disk already (_write_disk wrote it: not text)
            if not await host.apply_text(session.root / path, text, create=False):
                plan.conflicts.append(RewindConflict(path=path, reason="the editor refused the edit"))

    async def _record_rewind(self, session: AgentSession, target: CheckpointMark, plan: _Plan, cut: bool) -> str:
        rewind_id = new_uuid7()
        messages, todos, marks = list(session.messages), list(session.todos), marks_of(session)
        replaced = _Replaced(messages, todos, marks)

        def record(store: CheckpointStore) -> tuple[str, list[FileChange], str]:
            conversation = store.write_undo(_session_ref(session.id), _replaced_encoder.encode(replaced)) if cut else ""
            if not plan.safety:
                return "", [], conversation
            after = store.snapshot(_session_ref(session.id), f"after rewind {rewind_id}")
            return after.commit, [FileChange(c.path, _kind(c)) for c in store.changes(plan.safety, after.commit)], conversation

        after, files, conversation = await self._checked(session, record)
        mark = CheckpointMark(
            turn_id=rewind_id, created_at=iso_utc(), kind="rewind", prompt=f"rewind to: {target.prompt}" if target.prompt else "rewind",
            todos=todos, before=plan.safety, after=after, files=files, conversation=conversation,
        )
        if cut and target.kind == "turn":
            session.messages = messages[: target.message_index]
            if all(isinstance(m, UserMessage) and m.context for m in session.messages):
                # Back to the first prompt: what came before it is only context about then (what
                # changed in the workspace), so the session is empty, saved so (the record holds
                # no message and no title), and named again by its next prompt.
                session.messages, session.title = [], ""
            session.todos = list(target.todos)
            kept = marks[: marks.index(target)]
        elif cut:
            undone = await self._checked(session, lambda store: _replaced_decoder.decode(store.blobs([target.conversation])[target.conversation]))
            session.messages, session.todos, kept = undone.messages, undone.todos, undone.marks
        else:
            kept = marks
        _set_marks(session, kept + [mark])
        session.changed(turn_ended=True)
        return rewind_id


def _relative(session: AgentSession, path: str) -> str:
    """A workspace-relative, `/`-separated path as the store names it; outside the workspace: refused."""
    candidate = Path(path) if Path(path).is_absolute() else session.root / path
    try:
        return candidate.resolve().relative_to(session.root.resolve()).as_posix()
    except (ValueError, OSError):
        raise Refused(f"{path!r} is not inside the workspace {session.root}; give a path relative to it") from None


def _prompt_in_place(session: AgentSession, mark: CheckpointMark) -> bool:
    if mark.kind != "turn" or mark.message_index < 0 or mark.message_index >= len(session.messages):
        return False
    message = session.messages[mark.message_index]
    return isinstance(message, UserMessage) and bool(message.content) and message.content[0].text == mark.prompt


def _written_paths(session: AgentSession, mark: CheckpointMark) -> set[str]:
    """Workspace-relative paths the turn's write tools named (the store may not hold them all)."""
    start = max(mark.message_index, 0)
    found: set[str] = set()
    for message in session.messages[start:]:
        if not isinstance(message, AssistantMessage):
            continue
        for part in message.content:
            if not isinstance(part, ToolCallPart):
                continue
            # write_file and edit_file name one `path`, apply_patch each file in its patch.
            for path in written_paths(part.tool_name, part.input):
                candidate = Path(path) if Path(path).is_absolute() else session.root / path
                try:
                    found.add(candidate.resolve().relative_to(session.root.resolve()).as_posix())
                except (ValueError, OSError):
                    continue
    return found


def _only_paths(session: AgentSession, target: CheckpointMark, paths: list[str]) -> set[str]:
    """`RewindArgs.paths` as store paths; each must be one the turn changed (else refused, naming them)."""
    if not paths:
        raise Refused("paths is empty: name the files to restore, or leave paths out to restore the whole turn")
    wanted = {_relative(session, p) for p in paths}
    changed = {f.path for f in target.files}
    outside = sorted(wanted - changed)
    if outside:
        raise Refused(
            f"turn {target.turn_id!r} did not change {', '.join(outside)}; it changed: {', '.join(sorted(changed)) or 'nothing'} "
            f"({wire.CHECKPOINTS} lists each turn's files)")
    return wanted


def _plan(store: CheckpointStore, session: AgentSession, recorded: list[CheckpointMark],
          later: list[CheckpointMark], force: bool, label: str, only: set[str] | None = None) -> _Plan:
    """Which files go back, and which the user changed since the agent last did (conflicts);
    with `only`, just those paths."""
    for mark in recorded:
        if not store.has(mark.before):
            raise StoreError(f"the checkpoint of {mark.prompt or mark.turn_id!r} is no longer in the store")
    safety = store.snapshot(_session_ref(session.id), f"before rewind to {recorded[0].turn_id}")
    plan = _Plan(safety=safety.commit)
    # What the agent last left at each path its turns changed (None: it removed the file).
    last: dict[str, Entry | None] = {}
    for i, mark in enumerate(recorded):
        upto = mark.after or (recorded[i + 1].before if i + 1 < len(recorded) else safety.commit)
        for change in store.changes(mark.before, upto):
            if only is None or change.path in only:
                last[change.path] = change.new
    # Only the paths the turns changed: the rest of the workspace is not looked at.
    base = store.files(recorded[0].before, last)
    now = store.files(safety.commit, last)
    for path, left in sorted(last.items()):
        want, current = base.get(path), now.get(path)
        if current == want:
            continue  # already as it was
        if current != left:
            reason = _conflict_reason(current, left, path in safety.too_large)
            if not force:
                plan.conflicts.append(RewindConflict(path=path, reason=reason))
                continue
            plan.forced[path] = reason
        plan.restore[path] = want
        plan.current[path] = current
    unrecorded = sorted({p for m in later for p in m.unrecorded if only is None or p in only} - set(last))
    for path in unrecorded:
        size_note = "over 10 MB" if (session.root / path).is_file() and (session.root / path).stat().st_size > MAX_FILE_BYTES else "excluded by .gitignore"
        plan.conflicts.append(RewindConflict(path=path, reason=f"not restored: not recorded ({size_note})"))
    shas = [e.sha for e in list(plan.restore.values()) + list(plan.current.values()) if e is not None]
    plan.contents = store.blobs(shas)
    return plan


def _conflict_reason(current: Entry | None, left: Entry | None, too_large: bool) -> str:
    if too_large:
        return "grew over 10 MB after the agent last wrote it"
    if current is None:
        return "deleted after the agent last wrote it"
    if left is None:
        return "created again after the agent deleted it"
    return "changed after the agent last wrote it"


def _write_disk(store: CheckpointStore, session: AgentSession, plan: _Plan, label: str, open_paths: set[str]) -> None:
    """Keep forced files' content aside, then write every restored file that is not open in the
    editor (those go through the editor, _restore_buffers); binary content always goes to disk."""
    for path, reason in plan.forced.items():
        data = plan.contents.get(f"buffer:{path}")
        current = plan.current.get(path)
        if data is None and current is not None:
            data = plan.contents[current.sha]
        if data is not None:
            kept = store.keep_aside(label, path, data)
            for conflict in plan.conflicts:
                if conflict.path == path:
                    break
            else:
                plan.conflicts.append(RewindConflict(path=path, reason=f"{reason}; restored anyway (force)", keptAt=str(kept)))
    for path, entry in list(plan.restore.items()):
        if path in open_paths and entry is not None:
            try:
                plan.contents[entry.sha].decode("utf-8")
                continue
            except UnicodeDecodeError:
                pass
        try:
            restore_file(session.root, path, None if entry is None else plan.contents[entry.sha], entry.mode if entry else "100644")
        except (StoreError, OSError) as exc:
            del plan.restore[path]
            plan.conflicts.append(RewindConflict(path=path, reason=f"not restored: {exc}"))
