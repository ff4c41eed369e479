"""The session index: what makes listing 10,000 sessions cost milliseconds instead of a 1 GB scan.

Layout (all under `sessions/index/`, a subdirectory so that rewriting the index never changes the
modification time of `sessions/` itself, which is our cheap "something changed" signal):

- `manifest.json`  `{"version", "sessions": {id: workspace key}, "corrupt": {id: {size, mtimeNs, reason}}}`
  every file the index knows, so a file added or deleted behind our back shows up as a set
  difference against one `os.listdir` (no stat, no read).
- `<key>.json`     `{"version", "dirMtimeNs", "entries": {id: {title, createdAt, updatedAt, updatedTs,
  messageCount, cwd, size, mtimeNs}}}` one workspace's sessions. `dirMtimeNs` is the mtime of
  `sessions/` at which every entry was last known to match its file; when the directory has changed
  since, the listing stats that workspace's files (not reads: only those whose size or mtime differ
  are parsed again) and records the new mtime.
- `lock`           the file lock every index update holds (re-read, merge, write).

A missing or corrupt manifest triggers a full rebuild, which still reuses any shard entry whose
size and mtime match the file, so losing only the manifest costs stats, not a 1 GB read.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from .atomic import CorruptFile, decode_or_corrupt, file_lock, write_atomic
from .paths import workspace_key
from .session_record import (
    SessionRecord,
    SessionSummary,
    first_prompt,
    iso_to_epoch,
    make_title,
    record_decoder,
    record_problem,
)

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
    dir_mtime_ns: int = 0
    entries: dict[str, IndexEntry] = msgspec.field(default_factory=dict)


_manifest_decoder = msgspec.json.Decoder(Manifest)
_shard_decoder = msgspec.json.Decoder(Shard)
_encoder = msgspec.json.Encoder()


def record_check(session_id: str) -> Callable[[SessionRecord], str | None]:
    return lambda record: record_problem(record, session_id)


def is_session_name(name: str) -> bool:
    """`<uuid>.json`, cheaply: this runs on every name of a 10,000-entry directory."""
    return len(name) == 41 and name.endswith(".json") and name[8] == name[13] == name[18] == name[23] == "-"


@functools.lru_cache(maxsize=1024)
def _key(cwd: str) -> str:
    return workspace_key(cwd)


class IndexTxn:
    """One read-merge-write of the index, made while holding its lock."""

    def __init__(self, index: SessionIndex, manifest: Manifest, *, fresh: bool = False) -> None:
        self.index = index
        self.manifest = manifest
        self.fresh = fresh  # a rebuild: shards start empty instead of being read from disk
        self.shards: dict[str, Shard] = {}
        self.dirty: set[str] = set()
        self.manifest_dirty = fresh

    def shard(self, key: str) -> Shard:
        if key not in self.shards:
            loaded = None if self.fresh else self.index.read_shard(key)
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
        if self.fresh:
            for path in self.index.shard_files():
                if path.stem not in self.shards:
                    self.index.remove(path)
        if self.manifest_dirty:
            self.index.write(self.index.manifest_path, self.manifest)
        self.dirty.clear()
        self.manifest_dirty = False


class SessionIndex:
    def __init__(self, sessions: Path) -> None:
        self.sessions = sessions
        self.dir = sessions / "index"
        self.manifest_path = self.dir / "manifest.json"
        self.lock_path = self.dir / "lock"
        # path -> ((inode, size, mtime_ns), decoded). Writers always replace files (new inode),
        # so an unchanged triple means an unchanged file and the decode can be skipped.
        self._cache: dict[Path, tuple[tuple[int, int, int], Any]] = {}

    # -- files ----------------------------------------------------------------------------
    def shard_path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def shard_files(self) -> list[Path]:
        try:
            return [self.dir / n for n in os.listdir(self.dir) if n.endswith(".json") and n != "manifest.json"]
        except FileNotFoundError:
            return []

    def names(self) -> set[str]:
        """Ids of every `<uuid>.json` in the directory: the ground truth, one getdents, no stats."""
        try:
            return {n[:-5] for n in os.listdir(self.sessions) if is_session_name(n)}
        except FileNotFoundError:
            return set()

    def remove_stale_temps(self, older_than: float = 600.0) -> None:
        """Delete temp files a killed writer left behind (a live writer's is seconds old)."""
        try:
            names = [n for n in os.listdir(self.sessions) if n.startswith(".") and n.endswith(".tmp")]
        except FileNotFoundError:
            return
        cutoff = time.time() - older_than
        for name in names:
            try:
                if os.stat(self.sessions / name).st_mtime < cutoff:
                    os.unlink(self.sessions / name)
            except FileNotFoundError:
                pass

    def dir_mtime_ns(self) -> int:
        try:
            return os.stat(self.sessions).st_mtime_ns
        except FileNotFoundError:
            return -1

    def stamp(self, session_id: str) -> Stamp | None:
        try:
            st = os.stat(self.sessions / f"{session_id}.json")
        except FileNotFoundError:
            return None
        return (st.st_size, st.st_mtime_ns)

    @staticmethod
    def key_for(cwd: str | os.PathLike[str]) -> str:
        return _key(os.fspath(cwd))

    def _read(self, path: Path, decoder: msgspec.json.Decoder[T]) -> T | None:
        """Cached decode; None when missing, of another version, or corrupt (copied aside)."""
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                sig = (st.st_ino, st.st_size, st.st_mtime_ns)
                cached = self._cache.get(path)
                if cached is not None and cached[0] == sig:
                    return cached[1]
                data = f.read()
        except FileNotFoundError:
            self._cache.pop(path, None)
            return None
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

    def write(self, path: Path, value: Manifest | Shard) -> None:
        write_atomic(path, _encoder.encode(value))
        st = os.stat(path)
        self._cache[path] = ((st.st_ino, st.st_size, st.st_mtime_ns), value)

    def remove(self, path: Path) -> None:
        self._cache.pop(path, None)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    @contextmanager
    def locked(self) -> Iterator[None]:
        with file_lock(self.lock_path):
            try:
                yield
            except BaseException:
                # A failed update may have mutated cached objects that were never written.
                self._cache.clear()
                raise

    # -- parsing --------------------------------------------------------------------------
    def parse(self, session_id: str) -> tuple[str, IndexEntry] | CorruptNote | None:
        """(workspace key, entry) for a good file, a note for a corrupt one, None when it is gone."""
        path = self.sessions / f"{session_id}.json"
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())  # the stat of exactly the bytes read
                data = f.read()
        except FileNotFoundError:
            return None
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
        manifest = self.read_manifest()
        return IndexTxn(self, manifest) if manifest is not None else self.rebuild()

    def rebuild(self) -> IndexTxn:
        """Index every session file again; shard entries whose stamp still matches are reused."""
        dir_mtime = self.dir_mtime_ns()
        names = self.names()
        if names:
            log.info("rebuilding the session index from %d files in %s", len(names), self.sessions)
        known: dict[str, tuple[str, IndexEntry]] = {}
        for path in self.shard_files():
            shard = self._read(path, _shard_decoder)
            if shard is not None:
                known.update((sid, (path.stem, entry)) for sid, entry in shard.entries.items())
        txn = IndexTxn(self, Manifest(), fresh=True)
        for session_id in sorted(names):
            hit = known.get(session_id)
            if hit is not None and (hit[1].size, hit[1].mtime_ns) == self.stamp(session_id):
                txn.put(session_id, *hit)
            else:
                self.reparse(txn, session_id)
        for shard in txn.shards.values():
            shard.dir_mtime_ns = dir_mtime
        return txn

    # -- the listing path -----------------------------------------------------------------
    def refresh(self, key: str | None) -> tuple[Manifest, Shard | None]:
        """Manifest and the shard of `key`, repaired first if the directory disagrees with them."""
        dir_mtime = self.dir_mtime_ns()
        names = self.names()
        manifest = self.read_manifest()
        if manifest is None and not names:
            return Manifest(), None  # nothing stored: do not create index files for a read
        shard = self.read_shard(key) if key is not None and manifest is not None else None
        if manifest is not None and self._fresh(manifest, names, key, shard, dir_mtime):
            return manifest, shard
        with self.locked():
            return self._repair(key)

    def _fresh(self, manifest: Manifest, names: set[str], key: str | None, shard: Shard | None, dir_mtime: int) -> bool:
        if len(names) != len(manifest.sessions) + len(manifest.corrupt):
            return False
        if any(n not in manifest.sessions and n not in manifest.corrupt for n in names):
            return False
        for session_id, note in manifest.corrupt.items():  # fixed (or re-broken) by hand?
            if self.stamp(session_id) != (note.size, note.mtime_ns):
                return False
        if key is None:
            return True
        if shard is None:
            return key not in manifest.sessions.values()
        return shard.dir_mtime_ns == dir_mtime

    def _repair(self, key: str | None) -> tuple[Manifest, Shard | None]:
        self.remove_stale_temps()
        txn = self.begin()
        dir_mtime = self.dir_mtime_ns()  # before the scan: a change during it shows up next time
        names = self.names()
        manifest = txn.manifest
        for session_id in names:
            if session_id not in manifest.sessions and session_id not in manifest.corrupt:
                self.reparse(txn, session_id)
        for session_id in [*manifest.sessions, *manifest.corrupt]:
            if session_id not in names:
                txn.drop(session_id)
        for session_id, note in list(manifest.corrupt.items()):
            if self.stamp(session_id) != (note.size, note.mtime_ns):
                self.reparse(txn, session_id)
        if key is not None:
            shard = txn.shard(key)
            if shard.dir_mtime_ns != dir_mtime:
                self._verify(txn, key, dir_mtime)
        txn.commit()
        if key is None:
            return manifest, None
        return manifest, txn.shards[key] if txn.shards[key].entries else None

    def _verify(self, txn: IndexTxn, key: str, dir_mtime: int) -> None:
        """Make one workspace's shard match its files: stat each, parse only those that changed."""
        shard = txn.shard(key)
        for session_id in [sid for sid, k in txn.manifest.sessions.items() if k == key]:
            entry = shard.entries.get(session_id)
            if entry is None or (entry.size, entry.mtime_ns) != self.stamp(session_id):
                self.reparse(txn, session_id)
        for session_id in [sid for sid in shard.entries if txn.manifest.sessions.get(sid) != key]:
            del shard.entries[session_id]
        shard.dir_mtime_ns = dir_mtime
        txn.dirty.add(key)
