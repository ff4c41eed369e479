"""Session records on disk: save, load, list, resolve, resume hints and ownership leases.

The JSON files `sessions/<uuid>.json` are the source of truth. The index under `sessions/index/`
(session_index.py, docs/state-files.md) only makes listing cheap with 10,000 sessions; whenever
it is missing, corrupt or out of date it is repaired from the files.

Everything here is synchronous (the server calls it from a worker thread) and serialised by one
re-entrant mutex per store; every change in `sessions/` is serialised across processes by the
index database's write transaction (SQLite's write lock), which also records it.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from pathlib import Path

import msgspec

from .atomic import (
    SESSION_MAX_BYTES,
    CorruptFile,
    DamagedFile,
    read_state_file,
    FileLease,
    StateError,
    copy_aside_corrupt,
    corrupt_reason,
    decode_or_corrupt,
    read_lease_pid,
    warn_corrupt_once,
    write_atomic,
)
from .paths import sessions_dir
from . import session_search
from .session_index import IndexEntry, IndexTxn, SessionIndex, record_check
from ..protocol import SessionSummary
from ..model.ids import new_uuid7
from ..model.timestamps import iso_utc
from .session_record import (
    SessionRecord,
    decode_record,
    encode_record,
    first_prompt,
    make_title,
    record_decoder,
)


HINT_MIN = 8  # resume hints show at least this many characters of the id
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PREFIX = re.compile(r"[0-9a-f-]{1,36}")
_AMBIGUOUS_SHOWN = 10
VERIFY_DELAY_S = 0.25  # after a first listing: its answer is written before the full check starts


class SessionNotFound(StateError):
    pass


class CorruptSession(CorruptFile):
    def __init__(self, session_id: str, cause: CorruptFile) -> None:
        super().__init__(cause.path, cause.reason, cause.copy)
        where = f"a copy is at {cause.copy}" if cause.copy else "copying it aside failed"
        self.args = (
            f"session {session_id} cannot be loaded: its file is corrupt ({cause.reason}). "
            f"The file was left as it is; {where}.",
        )


class AmbiguousPrefix(StateError):
    def __init__(self, prefix: str, candidates: list[tuple[str, str]], total: int) -> None:
        self.prefix = prefix
        self.candidates = candidates  # (id prefix, title), at most _AMBIGUOUS_SHOWN of them
        lines = [f'session id prefix "{prefix}" is ambiguous; it matches {total} sessions:']
        lines += [f"  {hint}  {title}" for hint, title in candidates]
        if total > len(candidates):
            lines.append(f"  … and {total - len(candidates)} more")
        lines.append("Give more characters of the id.")
        super().__init__("\n".join(lines))


class SessionBusy(StateError):
    def __init__(self, session_id: str, pid: int | None) -> None:
        self.session_id = session_id
        self.pid = pid
        holder = f" (pid {pid})" if pid else ""
        super().__init__(
            f"session {session_id} is open in another shiro-neko server{holder}; "
            "it can be continued as a copy (fork) instead"
        )


class SessionLease:
    """Ownership of one session for writing; `release()` or leaving a `with` block gives it back."""

    def __init__(self, store: SessionStore, session_id: str, lease: FileLease) -> None:
        self.store = store
        self.session_id = session_id
        self.path = lease.path
        self._lease = lease

    def release(self) -> None:
        self.store.release(self.session_id)

    def __enter__(self) -> SessionLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def shortest_unique_prefix(session_id: str, sorted_ids: list[str], minimum: int = HINT_MIN) -> str:
    """Shortest prefix of `session_id` (at least `minimum` chars) that no other id shares.

    In sorted order the id sharing the longest prefix is a neighbour, so two comparisons do.
    """
    i = bisect.bisect_left(sorted_ids, session_id)
    longest = 0
    for j in (i - 1, i, i + 1):
        if 0 <= j < len(sorted_ids) and sorted_ids[j] != session_id:
            other = sorted_ids[j]
            n = 0
            while n < len(other) and n < len(session_id) and other[n] == session_id[n]:
                n += 1
            longest = max(longest, n)
    return session_id[: max(minimum, longest + 1)]


class SessionStore:
    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.dir = sessions_dir(self.home)
        self._mutex = threading.RLock()
        self._index = SessionIndex(self.dir)
        self._verifier: threading.Timer | None = None
        self._leases: dict[str, SessionLease] = {}

    # -- paths ----------------------------------------------------------------------------
    def path(self, session_id: str) -> Path:
        return self.dir / f"{session_id}.json"

    def lock_path(self, session_id: str) -> Path:
        return self.dir / f"{session_id}.lock"

    @staticmethod
    def _check_id(session_id: str) -> str:
        if not isinstance(session_id, str) or not _ID.fullmatch(session_id):
            raise SessionNotFound(f'"{session_id}" is not a session id')
        return session_id

    # -- leases ---------------------------------------------------------------------------
    def acquire(self, session_id: str) -> SessionLease:
        """Own `session_id` for writing until released; SessionBusy when another server owns it."""
        self._check_id(session_id)
        with self._mutex:
            held = self._leases.get(session_id)
            if held is not None:
                return held  # the same server resuming its own session
            # In an index transaction: creating the lock file changes `sessions/`, and the index
            # must know that change was ours (see session_index.py, the sync table).
            with self._index.our_change():
                lease = FileLease.try_acquire(self.lock_path(session_id))
            if lease is None:
                raise SessionBusy(session_id, read_lease_pid(self.lock_path(session_id)))
            self._leases[session_id] = SessionLease(self, session_id, lease)
            return self._leases[session_id]

    def release(self, session_id: str) -> None:
        with self._mutex:
            held = self._leases.pop(session_id, None)
            if held is not None:
                with self._index.our_change():
                    held._lease.release()

    def holds(self, session_id: str) -> bool:
        with self._mutex:
            return session_id in self._leases

    def close(self) -> None:
        """Release every lease this store holds (server shutdown)."""
        with self._mutex:
            for session_id in list(self._leases):
                self.release(session_id)
            self._index.close()

    # -- records --------------------------------------------------------------------------
    def save(self, record: SessionRecord, *, touch: bool = True) -> Path | None:
        """Write `record` atomically and index it; None (nothing written) when it has no messages
        and was never written: a record with none is written only over an earlier one, so a
        rewind of the whole conversation is kept (else a resume would bring the old one back).

        `touch` stamps `updatedAt` with the current time. A record whose lease another server holds
        is refused with SessionBusy; without a lease of our own one is held just for this write.
        """
        self._check_id(record.id)
        if not record.messages and not self.path(record.id).exists():
            return None
        with self._mutex:
            if touch:
                record.updated_at = iso_utc()
            if not record.title:
                record.title = make_title(first_prompt(record.messages))
            data = encode_record(record)
            key = self._index.key_for(record.cwd)
            path = self.path(record.id)
            # One write transaction: the file, its row and the sync state change together for every
            # other process (each waits for SQLite's write lock).
            with self._index.our_change() as txn:
                transient: FileLease | None = None
                if record.id not in self._leases:
                    transient = FileLease.try_acquire(self.lock_path(record.id))
                    if transient is None:
                        raise SessionBusy(record.id, read_lease_pid(self.lock_path(record.id)))
                try:
                    self._guard_overwrite(txn, record.id)
                    write_atomic(path, data)
                finally:
                    if transient is not None:
                        transient.release()
                st = os.stat(path)
                txn.put(record.id, key, IndexEntry.of(record, st.st_size, st.st_mtime_ns), record)
            return path

    def delete(self, session_id: str) -> bool:
        """Remove the record and its index and search rows; False when its file was already gone.
        SessionBusy when another server holds its lease (that window has it open); a lease of our
        own is the caller's to give back first (features/session_admin.py decides)."""
        self._check_id(session_id)
        with self._mutex:
            if session_id in self._leases:
                raise SessionBusy(session_id, os.getpid())
            with self._index.our_change() as txn:
                lease = FileLease.try_acquire(self.lock_path(session_id))
                if lease is None:
                    raise SessionBusy(session_id, read_lease_pid(self.lock_path(session_id)))
                try:
                    try:
                        os.unlink(self.path(session_id))
                        existed = True
                    except FileNotFoundError:
                        existed = False
                    txn.drop(session_id)
                finally:
                    lease.release()
            return existed

    def rename(self, session_id: str, title: str) -> SessionRecord:
        """Give a saved session another title (its updatedAt kept: a rename does not move it up
        the listing). SessionBusy when another server holds its lease: it would write its own
        title back at its next save."""
        with self._mutex:
            held = session_id in self._leases
            lease = self.acquire(session_id)
            try:
                record = self.load(session_id)
                record.title = title
                self.save(record, touch=False)
            finally:
                if not held:
                    lease.release()
            return record

    def _guard_overwrite(self, txn: IndexTxn, session_id: str) -> None:
        """Copy a corrupt file aside before a save replaces it (nothing rewrites it before that).

        A file whose size and mtime match its index entry holds bytes we wrote and indexed as
        good, so the usual save costs one stat; anything else is read and checked.
        """
        path = self.path(session_id)
        stamp = self._index.stamp(session_id)
        if stamp is None:
            return
        entry = txn.entry(session_id)
        if entry is not None and (entry.size, entry.mtime_ns) == stamp:
            return
        try:
            read = read_state_file(path, SESSION_MAX_BYTES)
        except DamagedFile:
            return  # moved aside already, or left and ignored: the save replaces the entry
        if read is None:
            return
        data = read[0]
        reason = corrupt_reason(data, record_decoder, record_check(session_id))
        if reason is None:
            return
        try:
            copy = copy_aside_corrupt(path, data)
        except OSError as exc:
            raise StateError(f"not saving session {session_id}: its corrupt file could not be copied aside ({exc})")
        warn_corrupt_once(path, reason, f"copied to {copy} before being replaced")

    def load(self, session_id: str) -> SessionRecord:
        """The record; SessionNotFound when there is no such file, CorruptSession when unreadable."""
        self._check_id(session_id)
        path = self.path(session_id)
        try:
            read = read_state_file(path, SESSION_MAX_BYTES)
        except DamagedFile as exc:
            raise CorruptSession(session_id, exc) from None
        if read is None:
            raise SessionNotFound(f"no session with id {session_id}")
        data = read[0]
        check = record_check(session_id)
        try:
            record = decode_record(data)
            if check(record) is None:
                return record
        except msgspec.DecodeError:
            pass
        # Under the lock: serialises the copy aside with other processes, and it is our change.
        with self._mutex, self._index.our_change():
            try:
                return decode_or_corrupt(path, data, record_decoder, check)
            except CorruptFile as exc:
                raise CorruptSession(session_id, exc) from None

    def fork(self, record: SessionRecord) -> SessionRecord:
        """A deep copy under a new id (for continuing a session another server holds). Not saved."""
        copy = decode_record(encode_record(record))
        copy.id = new_uuid7()
        copy.created_at = copy.updated_at = iso_utc()
        return copy

    # -- listing and lookup ---------------------------------------------------------------
    def search(self, cwd: str | os.PathLike[str], query: str, limit: int = 15) -> list[SessionSummary]:
        """The `limit` newest sessions of workspace `cwd` whose text holds every word of `query`
        (plain words, the last one a prefix: state/session_search.py), each with a snippet."""
        words = session_search.fts_words(query)
        if not words:
            return []
        with self._mutex:
            self._index.refresh()
            self._warn_corrupt()
            self._index.fill_search()
            found = self._index.search(self._index.key_for(cwd), words, limit)
            return [msgspec.structs.replace(self._summary(session_id, entry), snippet=snippet)
                    for session_id, entry, snippet in found]

    def _summary(self, session_id: str, entry: IndexEntry) -> SessionSummary:
        summary = entry.summary(session_id)
        summary.short_id = self._hint(session_id)
        return summary

    def list(self, cwd: str | os.PathLike[str], limit: int = 15) -> list[SessionSummary]:
        """The `limit` most recently updated sessions of workspace `cwd`, newest first."""
        with self._mutex:
            key = self._index.key_for(cwd)
            if not self._index.verified:
                # The first listing of this process: the rows it shows are checked now, every
                # other file right after the answer (verify_soon), not 10,000 stats first.
                if self._index.trusted():
                    newest = self._index.newest(key, limit)
                    if self._index.unchanged(newest):
                        self._warn_corrupt()
                        self.verify_soon()
                        return [self._summary(session_id, entry) for session_id, entry in newest]
            self._index.refresh()
            self._warn_corrupt()
            return [self._summary(session_id, entry) for session_id, entry in self._index.newest(key, limit)]

    def verify_soon(self, delay: float = VERIFY_DELAY_S) -> None:
        """Check every file of the directory once, in a thread, after `delay` (the answer that
        asked goes out first). A daemon: a short-lived process (`shiro sessions`) that ends first
        leaves it to the next one; an interrupted verify leaves only files a later one finishes."""
        if self._verifier is not None:
            return
        self._verifier = threading.Timer(delay, self.verify_now)
        self._verifier.daemon = True
        self._verifier.start()

    def verify_now(self) -> None:
        if self._verifier is not None:
            self._verifier.cancel()  # called directly: the deferred one has nothing left to do
        with self._mutex:
            self._index.refresh()
            self._warn_corrupt()

    def settle(self) -> None:
        """Run a deferred verify now if one is still waiting: after `/save` nothing is left to be
        written behind the answer (a client that snapshots the files then sees them still)."""
        if self._verifier is not None and not self._verifier.finished.is_set():
            self.verify_now()

    def latest(self, cwd: str | os.PathLike[str]) -> str | None:
        """Id of the newest session of workspace `cwd` (never another workspace's), or None."""
        newest = self.list(cwd, limit=1)
        return newest[0].id if newest else None

    def resolve(self, prefix: str, cwd: str | os.PathLike[str] | None = None) -> str:
        """Full id for a full id or unique prefix.

        With `cwd`, a prefix matching several sessions is narrowed to that workspace's when any
        of them is there; a full id always resolves, whatever workspace it belongs to.
        """
        wanted = prefix.strip().lower()
        if not _PREFIX.fullmatch(wanted):
            raise SessionNotFound(f'"{prefix}" is not a session id or id prefix')
        with self._mutex:
            self._index.refresh()
            found = self._index.with_prefix(wanted)
            if any(session_id == wanted for session_id, _, _ in found):
                return wanted
            matches = found
            if cwd is not None and len(matches) > 1:
                key = self._index.key_for(cwd)
                here = [m for m in matches if m[1] == key]
                matches = here or matches
            if not matches:
                raise SessionNotFound(f'no session id starts with "{prefix}"')
            if len(matches) == 1:
                return matches[0][0]
            shown = [
                (self._hint(session_id), "(corrupt)" if key is None else (title or "(untitled)"))
                for session_id, key, title in matches[:_AMBIGUOUS_SHOWN]
            ]
            raise AmbiguousPrefix(prefix, shown, len(matches))

    def workspace_key_of(self, session_id: str) -> str | None:
        """The workspace key the index holds for a session; None when unknown or corrupt."""
        with self._mutex:
            return next((key for sid, key, _ in self._index.with_prefix(session_id) if sid == session_id), None)

    def resume_hint(self, session_id: str) -> str:
        """Shortest prefix of the id, at least 8 characters, unique among the stored sessions."""
        with self._mutex:
            return shortest_unique_prefix(session_id, sorted(self._index.names()))

    def _hint(self, session_id: str) -> str:
        """Shortest unique prefix among the indexed ids: in id order the id sharing the longest
        prefix is a neighbour, so two rows do."""
        return shortest_unique_prefix(session_id, sorted([session_id, *self._index.neighbours(session_id)]))

    def _warn_corrupt(self) -> None:
        for session_id, note in self._index.corrupt_notes().items():
            warn_corrupt_once(self.path(session_id), note.reason, "copied aside as <name>.corrupt-* when first found")


__all__ = [
    "AmbiguousPrefix",
    "CorruptSession",
    "SessionBusy",
    "SessionLease",
    "SessionNotFound",
    "SessionRecord",
    "SessionStore",
    "SessionSummary",
    "StateError",
    "shortest_unique_prefix",
]
