"""The checkpoint store of one workspace: a shadow git repository under
`$SHIRO_NEKO_HOME/checkpoints/<workspace key>/` (docs/protocol.md, "Checkpoints").

Why git: content-addressed and deduplicated (a turn that changes one file of 10,000 adds one blob
and a few trees), and what Cline, Gemini CLI and opencode chose (docs/checkpoints.md). Why
plumbing rather than `git add -A`: `add` applies the workspace's `.gitattributes` (eol and text
conversion would change the bytes restored), cannot leave out large files, and fails outright on a
nested repository without a commit. Here git lists the files (`ls-files`, so `.gitignore` holds
as the user expects), we stat them, and only new or changed files are hashed, raw
(`hash-object --no-filters`). One `git fast-import` then writes the changed trees, the commit and
the session's ref: a checkpoint with one file changed is three git processes (`ls-files`,
`hash-object`, `fast-import`), an unchanged one is `ls-files` alone (bench/checkpoints.py).

Hostile workspaces: git runs with an environment built from nothing (no system or global config,
HOME pointing into the store, nothing of the user's GIT_* or secrets) and with `-c` overrides for
every setting that could run a program (hooks, fsmonitor, filters never engaged: no command here
applies attributes). The workspace's own `.git` is never read: GIT_DIR is the store.

Every git call is blocking: callers run them in a worker thread (features/checkpoints.py), never
on the event loop. Two servers on one workspace share the store under one lock file.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Iterable

import msgspec

from .atomic import file_lock, write_atomic
from .home_modes import FILE_MODE, GIT_UMASK, make_private_dirs

MAX_FILE_BYTES = 10 * 1024 * 1024
GIT_TIMEOUT = 120.0
# Beyond this many paths `files` lists the whole tree rather than one argument per path.
_MAX_PATHSPECS = 1000
# Settings that could make git run a program or read something of the user's; set whatever the
# store's own config says.
_OVERRIDES = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "core.quotePath=false",
    "core.precomposeUnicode=false",
    "core.splitIndex=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "index.threads=1",
)
# Racy-clean guard (as git's own): a file changed within this window of being recorded may change
# again without its mtime moving, so it is hashed again next time rather than trusted by stat.
_RACY_NS = 2_000_000_000

_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


def checkpoints_dir(home: Path, key: str) -> Path:
    return home / "checkpoints" / key


class StoreError(Exception):
    """git failed or is missing; the message says which command and why."""


class _Cached(msgspec.Struct, array_like=True):
    mtime_ns: int
    ctime_ns: int
    size: int
    ino: int
    mode: str
    sha: str


class _StatCache(msgspec.Struct):
    tree: str = ""  # the tree of `entries`, as last recorded (by any session)
    entries: dict[str, _Cached] = msgspec.field(default_factory=dict)
    # Each session ref's commit and tree as this store last wrote them, so a checkpoint needs no
    # `rev-parse`. Refs only move forward, under the lock, by this code: a stale value is an
    # ancestor of the real one, still reachable, and fast-import refuses to move the ref from it
    # (not a fast-forward), which sends the snapshot back to `rev-parse`.
    heads: dict[str, tuple[str, str]] = msgspec.field(default_factory=dict)


_cache_decoder = msgspec.msgpack.Decoder(_StatCache)
_cache_encoder = msgspec.msgpack.Encoder()


@dataclass
class Snapshot:
    commit: str
    tree: str
    too_large: list[str] = field(default_factory=list)  # files over MAX_FILE_BYTES, not recorded


@dataclass(frozen=True)
class Entry:
    mode: str
    sha: str


@dataclass
class Change:
    path: str
    old: Entry | None  # None: absent before
    new: Entry | None  # None: absent after


class CheckpointStore:
    def __init__(self, home: Path, key: str, root: Path) -> None:
        self.root = Path(root)
        self.dir = checkpoints_dir(home, key)
        self.git_dir = self.dir / "git"
        self._index = self.dir / "index"
        self._cache_file = self.dir / "stat-cache"
        self._lock_file = self.dir / "lock"
        with _locks_guard:
            self._thread_lock = _locks.setdefault(self.dir, threading.Lock())

    # -- git -----------------------------------------------------------------------------------
    def _env(self) -> dict[str, str]:
        home = str(self.dir / "home")  # never created: nothing of the user's is read from HOME
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "XDG_CONFIG_HOME": home,
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.root),
            "GIT_INDEX_FILE": str(self._index),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_AUTHOR_NAME": "shiro-neko",
            "GIT_AUTHOR_EMAIL": "checkpoints@shiro-neko.invalid",
            "GIT_COMMITTER_NAME": "shiro-neko",
            "GIT_COMMITTER_EMAIL": "checkpoints@shiro-neko.invalid",
            "LC_ALL": "C",
        }

    def git(self, *args: str, input: bytes | None = None, work_tree: bool = True) -> bytes:
        command = ["git"]
        for setting in _OVERRIDES:
            command += ["-c", setting]
        command += list(args)
        env = self._env()
        if not work_tree:
            del env["GIT_WORK_TREE"], env["GIT_DIR"]
        try:
            done = subprocess.run(
                command, input=input, capture_output=True, env=env, cwd=self.root if work_tree else self.dir,
                timeout=GIT_TIMEOUT, check=False,
                # The store holds copies of the workspace's files (`.env` too): git makes its
                # objects, packs, refs and index owner-only (0400/0600/0700). No command here
                # writes the work tree, so the user's files never get this umask.
                umask=GIT_UMASK,
            )
        except FileNotFoundError:
            raise StoreError("git is not installed; checkpoints need it") from None
        except subprocess.TimeoutExpired:
            raise StoreError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f} s") from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise StoreError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
        return done.stdout

    def locked(self) -> "_StoreLock":
        """Held around every sequence of git calls: threads of this process and other servers."""
        return _StoreLock(self)

    def _ensure(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        make_private_dirs(self.dir)
        self.git("init", "--quiet", "--bare", str(self.git_dir), work_tree=False)

    # -- recording -------------------------------------------------------------------------------
    def snapshot(self, ref: str, message: str) -> Snapshot:
        """Record the workspace's files as a commit on `ref` (one ref per session keeps its
        checkpoints from garbage collection). Call with the lock held."""
        self._ensure()
        cache = self._load_cache()
        entries, to_hash, too_large = self._walk(cache)
        for (rel, fresh), sha in zip(to_hash, self._hash_files(to_hash)):
            if sha:
                fresh.sha = sha
                entries[rel] = fresh
        head = cache.heads.get(ref)
        if head is None:
            found = self._head(ref)
            head = found if found[0] else None
        lines = _tree_changes(cache.entries if cache.tree else {}, entries)
        tree = cache.tree if cache.tree and not lines else ""
        if head is not None and tree and head[1] == tree:
            # Nothing changed since this session's last checkpoint: the same checkpoint.
            if cache.heads.get(ref) != head or entries != cache.entries:
                cache.heads[ref] = head
                self._write_cache(_StatCache(tree, entries, cache.heads))
            return Snapshot(head[0], tree, sorted(too_large))
        try:
            commit, tree = self._commit(ref, message, head, cache.tree, lines)
        except StoreError:
            # The cached head is stale (another version of this code moved the ref) or the
            # cached tree is gone: from the ref's real commit, every entry written afresh.
            found = self._head(ref)
            commit, tree = self._commit(ref, message, found if found[0] else None, "", _tree_changes({}, entries))
        cache.heads[ref] = (commit, tree)
        self._write_cache(_StatCache(tree, entries, cache.heads))
        return Snapshot(commit, tree, sorted(too_large))

    def _walk(self, cache: _StatCache) -> tuple[dict[str, _Cached], list[tuple[str, _Cached]], list[str]]:
        """The files git lists (not ignored), each either unchanged since the cache by its stat or
        to be hashed; and those over MAX_FILE_BYTES."""
        try:
            os.unlink(self._index)  # an earlier version's index: its entries would hide ignored files as "cached"
        except FileNotFoundError:
            pass
        # One decode of the whole list (surrogateescape: what os.fsdecode does per name, 10,000
        # calls ~10 ms otherwise). The store keeps no index: every file is one of the "others".
        listed = self.git("ls-files", "-z", "--others", "--exclude-standard").decode("utf-8", "surrogateescape").split("\0")
        now = _now_ns()
        known_entries = cache.entries
        entries: dict[str, _Cached] = {}
        to_hash: list[tuple[str, _Cached]] = []
        too_large: list[str] = []
        lstat, is_reg = os.lstat, stat.S_ISREG
        # lstat relative to the root's descriptor: no path objects per file (10,000 files: ~50 ms
        # of pathlib otherwise, bench/checkpoints.py).
        root_fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            for rel in listed:
                if not rel or rel[-1] == "/" or "\n" in rel:
                    continue  # a nested repository (not descended into), or a name git's lists cannot carry
                try:
                    st = lstat(rel, dir_fd=root_fd)
                except OSError:
                    continue  # gone: not in this snapshot
                if not is_reg(st.st_mode):
                    continue  # links and special files are not recorded
                if st.st_size > MAX_FILE_BYTES:
                    too_large.append(rel)
                    continue
                mode = "100755" if st.st_mode & 0o111 else "100644"
                known = known_entries.get(rel)
                if (
                    known is not None and known.sha and known.mtime_ns == st.st_mtime_ns and known.size == st.st_size
                    and known.ino == st.st_ino and known.ctime_ns == st.st_ctime_ns and known.mode == mode
                    and now - known.mtime_ns > _RACY_NS
                ):
                    entries[rel] = known
                else:
                    to_hash.append((rel, _Cached(st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, mode, "")))
        finally:
            os.close(root_fd)
        return entries, to_hash, too_large

    def _commit(self, ref: str, message: str, head: tuple[str, str] | None, base: str, lines: list[bytes]) -> tuple[str, str]:
        """One `git fast-import`: the commit of `base` (a tree, "" for none) with `lines` applied,
        child of `head`, written to `ref`; it writes only the trees above what changed and
        moves the ref only as a fast-forward. Returns (commit, tree)."""
        data = message.encode()
        stream = [
            b"feature done\ncommit ", ref.encode(), b"\nmark :1\n",
            f"committer shiro-neko <checkpoints@shiro-neko.invalid> {int(time.time())} +0000\n".encode(),
            b"data %d\n" % len(data), data, b"\n",
        ]
        if head is not None:
            stream.append(f"from {head[0]}\n".encode())
        if head is None or head[1] != base:
            # The session's last commit may hold another tree than the one the cache was diffed
            # against (another session recorded since): start from that tree instead.
            stream.append(f'M 040000 {base} ""\n'.encode() if base else b"deleteall\n")
        stream += lines
        stream.append(b'get-mark :1\nls :1 ""\ndone\n')
        try:
            out = self.git("fast-import", "--quiet", "--done", "--cat-blob-fd=1", input=b"".join(stream)).split()
        except StoreError:
            # A failed import leaves a crash report holding the stream (paths): not kept.
            for report in self.git_dir.glob("fast_import_crash_*"):
                report.unlink(missing_ok=True)
            raise
        if len(out) < 4 or len(out[0]) != 40:
            raise StoreError(f"git fast-import answered {b' '.join(out)[:200]!r}")
        return out[0].decode(), out[3].decode()

    def _hash_files(self, to_hash: list[tuple[str, "_Cached"]]) -> list[str]:
        """The blob id of each file ("" for one gone meanwhile), written to the store. Another
        process may rename or delete a listed file between the walk and git's read (a second
        server's atomic write leaves `.name.XXXX.tmp` for an instant: two editor windows on one
        workspace): git then fails on that path, so the files still there are hashed again."""
        if not to_hash:
            return []
        rels = [rel for rel, _ in to_hash]
        for _ in range(3):
            present = [rel for rel in rels if os.path.lexists(os.path.join(self.root, rel))]
            try:
                out = self.git("hash-object", "-w", "--no-filters", "--stdin-paths",
                               input=b"".join(os.fsencode(rel) + b"\n" for rel in present)).split()
            except StoreError:
                rels = present
                continue
            shas = dict(zip(present, (sha.decode() for sha in out)))
            return [shas.get(rel, "") for rel, _ in to_hash]
        raise StoreError("git hash-object failed three times: files keep changing under the workspace")

    def _head(self, ref: str) -> tuple[str, str]:
        """The ref's commit and its tree, or ("", "") for a new ref (one git call)."""
        try:
            out = self.git("rev-parse", "--revs-only", ref + "^{commit}", ref + "^{tree}").decode().split()
        except StoreError:
            return "", ""
        return (out[0], out[1]) if len(out) == 2 else ("", "")

    def _write_cache(self, cache: _StatCache) -> None:
        # Atomic but not fsynced: the cache only saves work (a lost or stale one means hashing
        # again, and its tree is checked against the index), and an fsync per checkpoint costs
        # more than the checkpoint on a busy disk.
        tmp = self._cache_file.with_name(f".stat-cache.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(fd, FILE_MODE)  # a temp file an earlier version left 0644 keeps its mode through O_TRUNC
            f.write(_cache_encoder.encode(cache))
        os.replace(tmp, self._cache_file)

    def _load_cache(self) -> _StatCache:
        try:
            cache = _cache_decoder.decode(self._cache_file.read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return _StatCache()  # lost or damaged: everything is hashed again, nothing else lost
        return cache

    def resolve(self, ref: str) -> str:
        try:
            return self.git("rev-parse", "--verify", "--quiet", ref + "^{commit}").decode().strip()
        except StoreError:
            return ""

    def has(self, commit: str) -> bool:
        return bool(commit) and bool(self.resolve(commit))

    # -- reading -------------------------------------------------------------------------------
    def files(self, commit: str, paths: "Iterable[str] | None" = None) -> dict[str, Entry]:
        """The commit's files, or only those at `paths` (a rewind of 50 files of 10,000 lists 50:
        parsing every entry cost ~25 ms per call, bench/checkpoints.py)."""
        wanted = None if paths is None else sorted(set(paths))
        if wanted is not None and not wanted:
            return {}
        args = ["ls-tree", "-r", "-z", "--full-tree", commit]
        if wanted is not None and len(wanted) <= _MAX_PATHSPECS:
            args += ["--", *(":(literal)" + p for p in wanted)]  # literal: a name with `*` means itself
        out = self.git(*args)
        entries: dict[str, Entry] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, _kind, sha = meta.decode().split(" ")
            entries[os.fsdecode(path)] = Entry(mode, sha)
        if wanted is not None:
            # A pathspec naming a folder lists the files under it: only the paths asked for.
            entries = {p: entries[p] for p in wanted if p in entries}
        return entries

    def changes(self, old: str, new: str) -> list[Change]:
        """What differs between two recorded commits, path by path (no rename detection)."""
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--raw", old, new)
        fields = out.split(b"\0")
        changes: list[Change] = []
        i = 0
        while i + 1 < len(fields):
            meta, path = fields[i].decode(), os.fsdecode(fields[i + 1])
            i += 2
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_sha, new_sha, _status = meta[1:].split(" ")
            changes.append(Change(
                path,
                None if old_mode == "000000" else Entry(old_mode, old_sha),
                None if new_mode == "000000" else Entry(new_mode, new_sha),
            ))
        return changes

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The contents of blobs, in one `cat-file --batch` (raw: no filter, no conversion)."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self.git("cat-file", "--batch", input="".join(s + "\n" for s in wanted).encode())
        contents: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split(" ")
            pos = end + 1
            if len(header) < 3 or header[1] == "missing":
                raise StoreError(f"the store has lost the content {sha}")
            size = int(header[2])
            contents[sha] = out[pos:pos + size]
            pos += size + 1
        return contents

    def write_blob(self, data: bytes) -> str:
        return self.git("hash-object", "-w", "--stdin", input=data).decode().strip()

    # -- writing the workspace -------------------------------------------------------------------
    def keep_aside(self, label: str, rel: str, data: bytes) -> Path:
        """A file's current content, kept before a forced rewind replaces it."""
        target = self.dir / "kept" / label / _safe_relative(rel)
        write_atomic(target, data, mode=0o600)
        return target


class _StoreLock:
    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._held: object | None = None

    def __enter__(self) -> CheckpointStore:
        self.store._thread_lock.acquire()
        try:
            make_private_dirs(self.store.dir)
            self._held = file_lock(self.store._lock_file)
            self._held.__enter__()  # type: ignore[attr-defined]
        except BaseException:
            self.store._thread_lock.release()
            raise
        return self.store

    def __exit__(self, *exc: object) -> None:
        try:
            self._held.__exit__(None, None, None)  # type: ignore[union-attr]
        finally:
            self.store._thread_lock.release()


def _now_ns() -> int:
    return time.time_ns()


def _quote(rel: str) -> bytes:
    # fast-import reads a path C-quoted when it starts with a quote: every path is, so a name
    # with a quote, a backslash or a leading space means what it says.
    raw = os.fsencode(rel)
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def _tree_changes(old: dict[str, _Cached], new: dict[str, _Cached]) -> list[bytes]:
    """fast-import's file commands taking the files of `old` to those of `new`."""
    lines: list[bytes] = []
    for rel, entry in new.items():
        was = old.get(rel)
        if was is None or was.sha != entry.sha or was.mode != entry.mode:
            lines.append(f"M {entry.mode} {entry.sha} ".encode() + _quote(rel) + b"\n")
    for rel in old.keys() - new.keys():
        lines.append(b"D " + _quote(rel) + b"\n")
    return lines


def _safe_relative(rel: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if path.is_absolute() or any(part in ("", "..") for part in path.parts):
        raise StoreError(f"refusing a path outside the workspace: {rel!r}")
    return path


def restore_file(root: Path, rel: str, data: bytes | None, mode: str = "100644") -> None:
    """Put one workspace file back: `data` (atomically, with its executable bit) or, with None,
    remove it. The one place a rewind writes the workspace: the race-free workspace file access
    module takes it over when it lands (it must refuse a parent directory swapped for a link).

    A path whose parent is a symbolic link, or that leaves the workspace, is refused."""
    relative = _safe_relative(rel)
    target = root.joinpath(*relative.parts)
    parent = target.parent
    real_root = os.path.realpath(root)
    if os.path.realpath(parent) != os.path.join(real_root, *relative.parts[:-1]).rstrip(os.sep) and relative.parts[:-1]:
        raise StoreError(f"{rel}: a folder on its way is a link; not restored")
    if os.path.islink(target):
        raise StoreError(f"{rel}: is a link now; not restored")
    if data is None:
        try:
            os.unlink(target)
        except FileNotFoundError:
            pass
        return
    # The user's workspace, not the state home: the modes and directories the user's umask gives.
    write_atomic(target, data, mode=0o777 & ~_UMASK if mode == "100755" else 0o666 & ~_UMASK, private=False)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once at import, on one thread: os.umask can only be read by setting it, which would race
# with other threads creating files.
_UMASK = _read_umask()
