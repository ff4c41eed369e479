"""The session index: what makes listing 10,000 sessions cost milliseconds instead of a 1 GB scan.

Layout (all under `sessions/index/`, a subdirectory, so that rewriting the index never changes the
modification time of `sessions/` itself, which is the cheap "something changed" signal):

- `manifest.json`  `{"version", "sessions": {id: workspace key}, "corrupt": {id: {size, mtimeNs, reason}}}`
  every file the index knows, so a file added or deleted behind our back shows up as a set
  difference against one `os.listdir` (no stat, no read).
- `<key>.json`     `{"version", "entries": {id: {title, createdAt, updatedAt, updatedTs, messageCount,
  cwd, size, mtimeNs}}}` one workspace's sessions: a listing reads one of these.
- `state.json`     `{"version", "dirMtimeNs"}` the mtime of `sessions/` at which the whole index
  was known to match the files. Every change this code makes in `sessions/` (a save, a lease taken
  or given back, a corrupt copy) happens under the lock and carries the state forward when it was
  in step before; any other change (a file edited, added or removed by hand, a writer killed
  between its rename and its index update) leaves the directory mtime ahead of the state.
- `lock`           the file lock every index update holds (re-read, merge, write).

A listing trusts the index when the state matches the directory's mtime and the manifest matches
the directory's names. Otherwise it verifies everything under the lock: one stat per file, and
only files whose size or mtime differ from their entry (or that are new) are read and parsed.
A missing or corrupt manifest is rebuilt the same way from whatever shards survive, so losing the
manifest costs stats, not a 1 GB read; losing everything costs one read of every file.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from .atomic import SESSION_MAX_BYTES, CorruptFile, decode_or_corrupt, file_lock, read_state_file, write_atomic
from .paths import workspace_key
from ..protocol import SessionSummary
from .session_record import (
    SessionRecord,
    first_prompt,
    iso_to_epoch,
    make_title,
    record_decoder,
    record_problem,
)

# The index files hold one line per session: far below this even for 100k sessions.
INDEX_MAX_BYTES = 512 * 1024 * 1024

log = logging.getLogger("shiro_neko.state")

INDEX_VERSION = 1
Stamp = tuple[int, int]  # (size, mtime_ns): what tells a file changed without reading it
T = TypeVar("T")


class IndexEntry(msgspec.Struct, rename="camel", kw_only=True):
    title: str
    created_at: str
    updated_at: str
    updated_ts: float  # parsed once here so sorting never parses timestamps
    message_count: int
    cwd: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, record: SessionRecord, size: int, mtime_ns: int) -> IndexEntry:
        return cls(
            # A record written without a title (by hand, or an older writer) is named as we would.
            title=record.title or make_title(first_prompt(record.messages)),
            created_at=record.created_at,
            updated_at=record.updated_at,
            updated_ts=iso_to_epoch(record.updated_at),
            message_count=len(record.messages),
            cwd=record.cwd,
            size=size,
            mtime_ns=mtime_ns,
        )

    def summary(self, session_id: str) -> SessionSummary:
        return SessionSummary(
            id=session_id,
            title=self.title,
            created_at=self.created_at,
            updated_at=self.updated_at,
            message_count=self.message_count,
            cwd=self.cwd,
        )


class CorruptNote(msgspec.Struct, rename="camel", kw_only=True):
    size: int
    mtime_ns: int
    reason: str


class Manifest(msgspec.Struct, kw_only=True):
    version: int = INDEX_VERSION
    sessions: dict[str, str] = msgspec.field(default_factory=dict)
    corrupt: dict[str, CorruptNote] = msgspec.field(default_factory=dict)


class Shard(msgspec.Struct, rename="camel", kw_only=True):
    version: int = INDEX_VERSION
    entries: dict[str, IndexEntry] = msgspec.field(default_factory=dict)


class SyncState(msgspec.Struct, rename="camel", kw_only=True):
    version: int = INDEX_VERSION
    dir_mtime_ns: int = -1


_manifest_decoder = msgspec.json.Decoder(Manifest)
_shard_decoder = msgspec.json.Decoder(Shard)
_state_decoder = msgspec.json.Decoder(SyncState)
_encoder = msgspec.json.Encoder()


def record_check(session_id: str) -> Callable[[SessionRecord], str | None]:
    return lambda record: record_problem(record, session_id)


@functools.lru_cache(maxsize=1024)
def _key(cwd: str) -> str:
    return workspace_key(cwd)


class IndexTxn:
    """One read-merge-write of the index, made while holding its lock."""

    def __init__(self, index: SessionIndex, manifest: Manifest) -> None:
        self.index = index
        self.manifest = manifest
        self.shards: dict[str, Shard] = {}
        self.dirty: set[str] = set()
        self.manifest_dirty = False
        self.verified = False  # this transaction already checked every file

    def shard(self, key: str) -> Shard:
        if key not in self.shards:
            loaded = self.index.read_shard(key)  # None when missing or corrupt: refilled by verify
            self.shards[key] = loaded if loaded is not None else Shard()
        return self.shards[key]

    def _forget(self, session_id: str) -> None:
        old = self.manifest.sessions.pop(session_id, None)
        if old is not None:
            self.manifest_dirty = True
            if self.shard(old).entries.pop(session_id, None) is not None:
                self.dirty.add(old)
        if self.manifest.corrupt.pop(session_id, None) is not None:
            self.manifest_dirty = True

    def put(self, session_id: str, key: str, entry: IndexEntry) -> None:
        if self.manifest.sessions.get(session_id) != key or session_id in self.manifest.corrupt:
            self._forget(session_id)
            self.manifest.sessions[session_id] = key
            self.manifest_dirty = True
        self.shard(key).entries[session_id] = entry
        self.dirty.add(key)

    def mark_corrupt(self, session_id: str, note: CorruptNote) -> None:
        self._forget(session_id)
        self.manifest.corrupt[session_id] = note
        self.manifest_dirty = True

    def drop(self, session_id: str) -> None:
        self._forget(session_id)

    def commit(self) -> None:
        # Shards before the manifest: a crash in between leaves ids the manifest does not know,
        # which the next listing finds as unknown names and indexes again; never the reverse.
        for key in sorted(self.dirty):
            shard = self.shards[key]
            if shard.entries:
                self.index.write(self.index.shard_path(key), shard)
            else:
                self.index.remove(self.index.shard_path(key))
        if self.manifest_dirty:
            self.index.write(self.index.manifest_path, self.manifest)
        self.dirty.clear()
        self.manifest_dirty = False


# Session directories this process has verified. A file damaged in place (truncated, zeroed)
# leaves the directory's mtime alone, so a process does not trust state.json until it has checked
# every file once (one stat per file): a server finds the damage, copies the file aside and says
# so when it starts, not only on resume. The first listing does not wait for all of it
# (10,000 stats): it checks the rows it shows (`trusted` + `unchanged`) and the store verifies
# the rest right after answering (`SessionStore.verify_soon`).
_VERIFIED: set[Path] = set()


class SessionIndex:
    def __init__(self, sessions: Path) -> None:
        self.sessions = sessions
        self._prefix = os.fspath(sessions) + os.sep  # str joins: pathlib costs ~5 µs per file
        self.dir = sessions / "index"
        self.manifest_path = self.dir / "manifest.json"
        self.state_path = self.dir / "state.json"
        self.lock_path = self.dir / "lock"
        # path -> ((inode, size, mtime_ns), decoded). Writers always replace files (new inode),
        # so an unchanged triple means an unchanged file and the decode can be skipped.
        self._cache: dict[Path, tuple[tuple[int, int, int], Any]] = {}

    # -- files ----------------------------------------------------------------------------
    def shard_path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def shard_files(self) -> list[Path]:
        try:
            names = os.listdir(self.dir)
        except FileNotFoundError:
            return []
        return [self.dir / n for n in names if n.endswith(".json") and n not in ("manifest.json", "state.json")]

    def names(self) -> set[str]:
        """Ids of every `<uuid>.json` in the directory: the ground truth, one getdents, no stats."""
        return self._scan()[0]

    def _scan(self) -> tuple[set[str], list[str]]:
        """(session ids, temp file names) from one listing of `sessions/`."""
        try:
            listing = os.listdir(self.sessions)
        except FileNotFoundError:
            return set(), []
        # Inline test, no per-name call: this runs over every name of a 10,000-entry directory.
        ids = {n[:-5] for n in listing if len(n) == 41 and n.endswith(".json")}
        return ids, [n for n in listing if n[0] == "." and n.endswith(".tmp")]

    def dir_mtime_ns(self) -> int:
        try:
            return os.stat(self.sessions).st_mtime_ns
        except FileNotFoundError:
            return -1

    def stamp(self, session_id: str) -> Stamp | None:
        try:
            st = os.stat(f"{self._prefix}{session_id}.json")
        except FileNotFoundError:
            return None
        return (st.st_size, st.st_mtime_ns)

    @staticmethod
    def key_for(cwd: str | os.PathLike[str]) -> str:
        return _key(os.fspath(cwd))

    def _read(self, path: Path, decoder: msgspec.json.Decoder[T]) -> T | None:
        """Cached decode; None when missing, of another version, or corrupt (copied aside)."""
        try:
            st = os.stat(path)  # of the entry itself when it is a regular file; the read checks again
            sig = (st.st_ino, st.st_size, st.st_mtime_ns)
            cached = self._cache.get(path)
            if cached is not None and cached[0] == sig and stat.S_ISREG(os.lstat(path).st_mode):
                return cached[1]
            read = read_state_file(path, INDEX_MAX_BYTES)
        except FileNotFoundError:
            read = None
        except CorruptFile:  # not a regular file (moved aside): rebuilt from the session files
            read = None
        if read is None:
            self._cache.pop(path, None)
            return None
        data, st = read
        sig = (st.st_ino, st.st_size, st.st_mtime_ns)
        try:
            value = decode_or_corrupt(path, data, decoder)
        except CorruptFile:
            return None  # rebuilt from the session files by the caller
        if getattr(value, "version", None) != INDEX_VERSION:
            return None
        self._cache[path] = (sig, value)
        return value

    def read_manifest(self) -> Manifest | None:
        return self._read(self.manifest_path, _manifest_decoder)

    def read_shard(self, key: str) -> Shard | None:
        return self._read(self.shard_path(key), _shard_decoder)

    def in_sync(self, dir_mtime: int | None = None) -> bool:
        """Whether every change in `sessions/` since the index was verified was one of ours."""
        state = self._read(self.state_path, _state_decoder)
        current = self.dir_mtime_ns() if dir_mtime is None else dir_mtime
        return state is not None and state.dir_mtime_ns == current

    def write_state(self, dir_mtime: int) -> None:
        self.write(self.state_path, SyncState(dir_mtime_ns=dir_mtime))

    def write(self, path: Path, value: Manifest | Shard | SyncState) -> None:
        write_atomic(path, _encoder.encode(value))
        st = os.stat(path)
        self._cache[path] = ((st.st_ino, st.st_size, st.st_mtime_ns), value)

    def remove(self, path: Path) -> None:
        self._cache.pop(path, None)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def remove_stale_temps(self, names: list[str], older_than: float = 600.0) -> bool:
        """Delete temp files a killed writer left behind (a live writer's is seconds old)."""
        cutoff = time.time() - older_than
        removed = False
        for name in names:
            try:
                if os.stat(self._prefix + name).st_mtime < cutoff:
                    os.unlink(self._prefix + name)
                    removed = True
            except FileNotFoundError:
                pass
        return removed

    @contextmanager
    def locked(self) -> Iterator[None]:
        with file_lock(self.lock_path):
            try:
                yield
            except BaseException:
                # A failed update may have mutated cached objects that were never written.
                self._cache.clear()
                raise

    @contextmanager
    def our_change(self) -> Iterator[bool]:
        """Wrap a change we make in `sessions/` (lock held): keeps the state in step if it was.

        Not written when the body raises: the change may be half done, so the next listing
        verifies instead of trusting.
        """
        synced = self.in_sync()
        yield synced
        if synced:
            self.write_state(self.dir_mtime_ns())

    # -- parsing --------------------------------------------------------------------------
    def parse(self, session_id: str) -> tuple[str, IndexEntry] | CorruptNote | None:
        """(workspace key, entry) for a good file, a note for a corrupt one, None when it is gone."""
        path = self.sessions / f"{session_id}.json"
        try:
            read = read_state_file(path, SESSION_MAX_BYTES)  # the stat of exactly the bytes read
        except CorruptFile:
            return None  # a FIFO, link or device, moved aside (or ignored): not a session
        if read is None:
            return None
        data, st = read
        try:
            record = decode_or_corrupt(path, data, record_decoder, record_check(session_id))
        except CorruptFile as exc:
            return CorruptNote(size=st.st_size, mtime_ns=st.st_mtime_ns, reason=exc.reason)
        return _key(record.cwd), IndexEntry.of(record, st.st_size, st.st_mtime_ns)

    def reparse(self, txn: IndexTxn, session_id: str) -> None:
        parsed = self.parse(session_id)
        if parsed is None:
            txn.drop(session_id)
        elif isinstance(parsed, CorruptNote):
            txn.mark_corrupt(session_id, parsed)
        else:
            txn.put(session_id, *parsed)

    # -- transactions (lock held) ---------------------------------------------------------
    def begin(self) -> IndexTxn:
        """A transaction on the current index; rebuilds (and commits) it first when it is lost."""
        manifest = self.read_manifest()
        if manifest is not None:
            return IndexTxn(self, manifest)
        names = self.names()
        if names:
            log.info("rebuilding the session index from %d files in %s", len(names), self.sessions)
        txn = IndexTxn(self, Manifest())
        txn.manifest_dirty = True
        for path in self.shard_files():  # whatever survived: entries are reused where stamps match
            for session_id in txn.shard(path.stem).entries:
                txn.manifest.sessions[session_id] = path.stem
        self.verify(txn)
        return txn

    def verify(self, txn: IndexTxn) -> None:
        """Make the whole index match the directory, commit, and record the state.

        One stat per file; only new files and files whose size or mtime changed are parsed.
        """
        dir_mtime = self.dir_mtime_ns()  # before the scan: a change during it shows up next time
        names, temps = self._scan()
        if temps and self.remove_stale_temps(temps):
            dir_mtime = self.dir_mtime_ns()
            names = self.names()
        manifest = txn.manifest
        for key in {*manifest.sessions.values(), *(p.stem for p in self.shard_files())}:
            txn.shard(key)
        for session_id in [*manifest.sessions, *manifest.corrupt]:
            if session_id not in names:
                txn.drop(session_id)
        # What each file looked like when indexed; the loop below is the cost of a verify at
        # 10,000 files, so it is kept to one dict lookup and one stat per file.
        known: dict[str, tuple[int, int]] = {
            sid: (note.size, note.mtime_ns) for sid, note in manifest.corrupt.items()
        }
        for key, shard in txn.shards.items():
            known.update((sid, (e.size, e.mtime_ns)) for sid, e in shard.entries.items() if manifest.sessions.get(sid) == key)
        changed = []
        for session_id in names:
            seen = known.get(session_id)
            if seen is not None:
                try:
                    st = os.stat(f"{self._prefix}{session_id}.json")
                except FileNotFoundError:
                    pass
                else:
                    if seen[0] == st.st_size and seen[1] == st.st_mtime_ns:
                        continue
            changed.append(session_id)
        for session_id in changed:
            self.reparse(txn, session_id)
        for key, shard in txn.shards.items():
            stray = [sid for sid in shard.entries if manifest.sessions.get(sid) != key]
            for session_id in stray:
                del shard.entries[session_id]
            if stray or not shard.entries:
                txn.dirty.add(key)
        txn.commit()
        self.write_state(dir_mtime)
        txn.verified = True

    # -- the listing path -----------------------------------------------------------------
    @property
    def verified(self) -> bool:
        """Whether this process has checked every file of the directory once."""
        return self.sessions in _VERIFIED

    def trusted(self, key: str | None) -> tuple[Manifest, Shard | None] | None:
        """Manifest and the shard of `key` when the index is in step with the directory (its state
        matches the directory's mtime and the manifest its names), else None. Files damaged in
        place are not looked for here: that is what `verified` and `unchanged` are for."""
        dir_mtime = self.dir_mtime_ns()
        names = self.names()
        manifest = self.read_manifest()
        if manifest is None and not names:
            return Manifest(), None  # nothing stored: do not create index files for a read
        # in_sync first: it reads state.json, which copies a corrupt one aside before a verify
        # rewrites it.
        if manifest is not None and self.in_sync(dir_mtime) and self._matches(manifest, names):
            shard = self.read_shard(key) if key is not None else None
            if shard is not None or key is None or key not in manifest.sessions.values():
                return manifest, shard
        return None

    def unchanged(self, entries: list[tuple[str, IndexEntry]]) -> bool:
        """Whether these files still have the size and mtime they were indexed with."""
        return all(self.stamp(sid) == (e.size, e.mtime_ns) for sid, e in entries)

    def refresh(self, key: str | None) -> tuple[Manifest, Shard | None]:
        """Manifest and the shard of `key`, verified first if the directory disagrees with them
        or this process has not checked every file yet."""
        if self.verified:
            found = self.trusted(key)
            if found is not None:
                return found
        with self.locked():
            txn = self.begin()
            if not txn.verified:
                self.verify(txn)
            _VERIFIED.add(self.sessions)
            shard = txn.shards.get(key) if key is not None else None
            return txn.manifest, shard if shard is not None and shard.entries else None

    def _matches(self, manifest: Manifest, names: set[str]) -> bool:
        if len(names) != len(manifest.sessions) + len(manifest.corrupt):
            return False
        if not (names.issuperset(manifest.sessions.keys()) and names.issuperset(manifest.corrupt.keys())):
            return False
        # A corrupt file fixed (or broken again) in place: cheap, there are few of them.
        return all(self.stamp(sid) == (note.size, note.mtime_ns) for sid, note in manifest.corrupt.items())
