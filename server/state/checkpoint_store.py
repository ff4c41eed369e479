"""The checkpoint store of one workspace: a shadow git repository under
`$SHIRO_NEKO_HOME/checkpoints/<workspace key>/` (docs/protocol.md, "Checkpoints").

Why git: content-addressed and deduplicated (a turn that changes one file of 10,000 adds one blob
and a few trees), and what Cline, Gemini CLI and opencode chose (docs/checkpoints.md). Why
plumbing rather than `git add -A`: `add` cannot leave out large files or links and fails outright
on a nested repository without a commit. The store keeps its own index (`worktree-index`, never
the workspace's): `git status` walks the workspace in C against it (its stat of every file, the
untracked cache skipping folders whose mtime did not move) and names what changed; only those
paths are looked at here (link? over 10 MB? inside a nested repository?). A few changed files
are read here and one `git fast-import` writes their blobs, the trees above them (from the index's
last tree), the commit and the refs, while `update-index --index-info` enters them into the index
at the same time: a checkpoint with one file changed is `status`, then those two at once; an
unchanged one is `status` alone (bench/checkpoints.py). Many files (a first checkpoint) are
hashed by `update-index` itself, `write-tree` writes the tree, fast-import only the commit.

Hostile workspaces: git runs with an environment built from nothing (no system or global config,
HOME pointing into the store, nothing of the user's GIT_* or secrets) and with `-c` overrides for
every setting that could run a program (hooks, fsmonitor). The store's `info/attributes`, read over
every `.gitattributes` of the workspace, unsets every attribute that converts content or names a
filter: files are recorded byte for byte and no filter runs. The workspace's own `.git` is never
read: GIT_DIR is the store.

Every git call is blocking: callers run them in a worker thread (features/checkpoints.py), never
on the event loop. Two servers on one workspace share the store under one lock file.

Clean-up (`prune_if_due`, docs/checkpoints.md "Clean-up"): at most once a day per store, `git gc`
repacks it and drops what no ref holds (a deleted session's commits and blobs) once older than
PRUNE_GRACE. Everything that must live holds by a ref: a session's commits by `refs/sessions/<id>`,
its rewinds' undo blobs (no commit names them) by `refs/undo/<id>/<blob>`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
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
    # The untracked cache: `status` skips the folders whose mtime did not move since the last
    # snapshot (docs/checkpoints.md, "The store").
    "core.untrackedCache=true",
    "core.fileMode=true",
    "core.symlinks=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "core.quotePath=false",
    "core.precomposeUnicode=false",
    "core.splitIndex=false",
    "gc.auto=0",
    # No reflogs: with GIT_WORK_TREE set git takes the store for a non-bare repository and logs
    # every move of `refs/heads/worktree` and HEAD, a line per checkpoint that keeps every commit,
    # a deleted session's too, from the clean-up (`_gc` removes the logs an earlier version made).
    "core.logAllRefUpdates=false",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "index.threads=1",
)
# Up to this many changed files are read here and written by fast-import (`_record_inline`); more
# (a first checkpoint) are hashed by `update-index`, which keeps their stat at once.
_INLINE_MAX = 64
# Where the index's last tree is committed; HEAD names it (see `_ensure`).
_WORKTREE_REF = "refs/heads/worktree"  # under refs/heads/: `git fsck` accepts no other HEAD
# $GIT_DIR/info/attributes: read after, and so over, every `.gitattributes` of the workspace.
_NEUTRAL_ATTRIBUTES = b"* -text -crlf -eol -filter -ident -working-tree-encoding\n"
_IGNORE_FILE = ".gitignore"

# The clean-up: how often (per store), and how old an object no ref holds must be to go. The
# grace is git's own default (gc.pruneExpire, 2 weeks): every object still needed holds by a ref
# (a session's commits, its undos), so the grace only spares what a git process might be writing
# without the lock (none of ours does) and leaves a deleted session's objects for two weeks.
PRUNE_EVERY = 24 * 3600.0
PRUNE_GRACE = 14 * 24 * 3600.0
_STAMP = "pruned"  # the last clean-up's time (unix seconds), in the store's folder
_UNDO_REFS = "refs/undo/"  # + <session id>/<blob>: what a rewind cut from the conversation
# Dangling blobs found at a store's first clean-up: undos written before they had refs.
_LEGACY_UNDO_REFS = "refs/undo/legacy/"

log = logging.getLogger(__name__)

_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()
# The clean-up this process last tried per store (its time), and the stores whose failure was
# logged: a store whose stamp cannot be written (a read-only disk) is tried once a day all the
# same, and its failure logged once.
_prune_tried: dict[Path, float] = {}
_prune_failed: set[Path] = set()


def checkpoints_dir(home: Path, key: str) -> Path:
    return home / "checkpoints" / key


class StoreError(Exception):
    """git failed or is missing; the message says which command and why."""


class _State(msgspec.Struct):
    tree: str = ""  # the tree of the store's index, as last written
    index: tuple[int, int, int] = (0, 0, 0)  # the index file's (mtime_ns, size, inode) then
    # Each session ref's commit and tree as this store last wrote them, so a checkpoint needs no
    # `rev-parse` (checked against the ref's file before a commit builds on it).
    heads: dict[str, tuple[str, str]] = msgspec.field(default_factory=dict)


_state_decoder = msgspec.msgpack.Decoder(_State)
_state_encoder = msgspec.msgpack.Encoder()


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
        # The store's own index (`git status` and `update-index` keep it; never the workspace's):
        # each recorded file's stat and blob, and the untracked cache.
        self._index = self.dir / "worktree-index"
        self._attributes = self.git_dir / "info" / "attributes"
        self._state_file = self.dir / "record-state"
        self._lock_file = self.dir / "lock"
        self._stamp = self.dir / _STAMP
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
        if not (self.git_dir / "HEAD").exists():
            make_private_dirs(self.dir)
            self.git("init", "--quiet", "--bare", str(self.git_dir), work_tree=False)
        if not self._attributes.exists():
            # Highest precedence of all attributes files: whatever a workspace's `.gitattributes`
            # says, git (update-index, status's content check) reads every file raw, runs no
            # filter and converts no line ending or encoding.
            write_atomic(self._attributes, _NEUTRAL_ATTRIBUTES, mode=FILE_MODE)
        head = self.git_dir / "HEAD"
        if head.read_bytes() != b"ref: " + _WORKTREE_REF.encode() + b"\n":
            # `status` compares its index with HEAD too: HEAD follows the index's last tree, so
            # that comparison finds nothing to print.
            self.git("symbolic-ref", "HEAD", _WORKTREE_REF)
            self.git("config", "index.version", "4")  # paths prefix-compressed: a smaller index to read and write
            for stale in (self.dir / "index", self.dir / "stat-cache"):  # an earlier version's
                stale.unlink(missing_ok=True)

    # -- recording -------------------------------------------------------------------------------
    def snapshot(self, ref: str, message: str) -> Snapshot:
        """Record the workspace's files as a commit on `ref` (one ref per session keeps its
        checkpoints from garbage collection). Call with the lock held."""
        self._ensure()
        # Only git run by this code under the store lock writes the index: a lock file there now
        # is left by a process killed mid-write, and would fail every later `update-index`.
        self._index.with_name(self._index.name + ".lock").unlink(missing_ok=True)
        state = self._load_state()
        # The state's tree is the index's only if nothing wrote the index since (a process killed
        # between the index's update and the state's would leave them apart).
        base = state.tree if state.tree and state.index == _file_key(self._index) else ""
        add, drop, too_large = self._changes()
        head = self._verified_head(ref, state.heads.get(ref))
        if base and len(add) <= _INLINE_MAX:
            commit, tree = self._record_inline(ref, message, head, base, add, drop)
        else:
            if drop:
                self.git("update-index", "-z", "--force-remove", "--stdin", input=_paths(drop))
            if add:
                self._add(add)
            tree = base if base and not (add or drop) else self.git("write-tree").decode().strip()
            commit = head[0] if head is not None and head[1] == tree else self._commit(ref, message, head, tree, [])[0]
        if head is None or head[0] != commit or state.tree != tree or state.index != _file_key(self._index):
            state.heads[ref] = (commit, tree)
            self._write_state(_State(tree, _file_key(self._index), state.heads))
        return Snapshot(commit, tree, sorted(too_large))

    def _changes(self) -> tuple[list[str], list[str], list[str]]:
        """What differs between the store's index and the workspace's recordable files: git finds
        it (its stat walk and untracked cache, in C), only those paths are looked at here.
        Returns the files to record, those to leave out of the index (gone, links, over
        MAX_FILE_BYTES, ignored now, in a nested repository), and those over MAX_FILE_BYTES."""
        status = ("status", "--porcelain=v2", "-z", "--untracked-files=normal", "--no-renames",
                  "--ignore-submodules=all", "--no-ahead-behind")
        try:
            out = self.git(*status)
        except StoreError:
            # A damaged index: rebuilt from the workspace (every file hashed again).
            self._index.unlink(missing_ok=True)
            out = self.git(*status)
        tracked: list[str] = []  # in the index, changed, deleted or of another type now
        untracked: list[str] = []
        new_dirs: list[str] = []  # folders git lists whole (nothing in them recorded yet)
        for record in out.decode("utf-8", "surrogateescape").split("\0"):
            if record.startswith("1 "):
                fields = record.split(" ", 8)
                if len(fields) == 9 and fields[1][1] != ".":
                    tracked.append(fields[8])
            elif record.startswith("? "):
                rel = record[2:]
                if rel.endswith("/"):
                    if not os.path.lexists(os.path.join(self.root, rel, ".git")):  # a nested repository: never
                        new_dirs.append(rel)
                else:
                    untracked.append(rel)
        if new_dirs:
            listed = self.git("ls-files", "-z", "--others", "--exclude-standard", "--",
                              *(":(literal)" + d for d in new_dirs)).decode("utf-8", "surrogateescape").split("\0")
            untracked += [rel for rel in listed if rel and not rel.endswith("/")]
        # A file git found in a folder that became a nested repository after it was recorded
        # (git descends into it because of those entries): that folder's entries leave the index.
        nested = _nested_repositories(self.root, untracked + tracked)
        add: list[str] = []
        drop: list[str] = []
        too_large: list[str] = []
        if nested:
            drop += [rel for rel in self.git("ls-files", "-z", "--", *(":(literal)" + d + "/" for d in nested))
                     .decode("utf-8", "surrogateescape").split("\0") if rel]
        if any(_is_ignore_file(rel) for rel in tracked + untracked):
            # The ignore rules changed: files recorded before and ignored now leave the index.
            drop += [rel for rel in self.git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
                     .decode("utf-8", "surrogateescape").split("\0") if rel]
        dropped = set(drop)
        root_fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            for rel, known in [(rel, True) for rel in tracked] + [(rel, False) for rel in untracked]:
                if rel in dropped or _under(rel, nested):
                    continue
                try:
                    st = os.lstat(rel, dir_fd=root_fd)
                except OSError:
                    if known:
                        drop.append(rel)  # gone
                    continue
                if not stat.S_ISREG(st.st_mode):
                    if known:
                        drop.append(rel)  # now a link or a special file: not recorded
                elif st.st_size > MAX_FILE_BYTES:
                    too_large.append(rel)
                    if known:
                        drop.append(rel)
                else:
                    add.append(rel)
        finally:
            os.close(root_fd)
        return add, drop, too_large

    def _add(self, rels: list[str]) -> None:
        """Hash and write each file's blob into the index with its stat (the next `status`
        trusts it). A file gone meanwhile (a second server's `.name.XXXX.tmp` renamed) is left
        out by `--remove`; one that became a folder or a link since its `lstat` is left out on a
        second try."""
        try:
            self.git("update-index", "-z", "--add", "--remove", "--stdin", input=_paths(rels))
        except StoreError:
            root_fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                rels = [rel for rel in rels if _regular_or_gone(rel, root_fd)]
            finally:
                os.close(root_fd)
            self.git("update-index", "-z", "--add", "--remove", "--stdin", input=_paths(rels))

    def _record_inline(self, ref: str, message: str, head: tuple[str, str] | None, base: str,
                       add: list[str], drop: list[str]) -> tuple[str, str]:
        """A few files changed: read here (no link followed), their blobs and the commit written
        by one `fast-import` from the index's last tree while `update-index --index-info` enters
        them into the index (the two at once: neither needs the other). The index then holds no
        stat for them; the next `status` compares those few by content and fills it in."""
        blobs: list[bytes] = []
        index_info: list[bytes] = []
        lines: list[bytes] = []
        root_fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            for rel in add:
                found = _read_regular(rel, root_fd)
                if found is None:
                    drop.append(rel)  # gone, a link or too large since the walk
                    continue
                data, mode = found
                sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                blobs += [b"blob\ndata %d\n" % len(data), data, b"\n"]
                index_info.append(f"{mode} {sha}\t".encode() + os.fsencode(rel) + b"\0")
                lines.append(f"M {mode} {sha} ".encode() + _quote(rel) + b"\n")
        finally:
            os.close(root_fd)
        for rel in drop:
            index_info.append(b"0 " + b"0" * 40 + b"\t" + os.fsencode(rel) + b"\0")
            lines.append(b"D " + _quote(rel) + b"\n")
        if not lines:
            if head is not None and head[1] == base:
                return head[0], base  # nothing changed since this session's last checkpoint
            return self._commit(ref, message, head, base, [])
        failed: list[BaseException] = []

        def enter() -> None:
            try:
                self.git("update-index", "-z", "--index-info", input=b"".join(index_info))
            except BaseException as error:  # re-raised below, on the caller's thread
                failed.append(error)

        entering = threading.Thread(target=enter, name="checkpoint-index", daemon=True)
        entering.start()
        try:
            # The ids above are git's own (sha1 of "blob <size>\0" and the bytes): the lines name
            # the blobs the same stream writes first.
            result = self._commit(ref, message, head, base, lines, b"".join(blobs))
        finally:
            entering.join()
        if failed:
            raise failed[0]
        return result

    def _commit(self, ref: str, message: str, head: tuple[str, str] | None, base: str,
                lines: list[bytes], blobs: bytes = b"") -> tuple[str, str]:
        """One `git fast-import`: `blobs`, then the commit of `base` (a tree) with `lines`
        applied, child of `head`, written to `ref` and to the ref HEAD names (the index's tree,
        for `status`). Forced: that ref moves between sessions' lines; `ref` itself moves
        forward, as `head` is its commit now (`_verified_head`). Returns (commit, tree)."""
        data = message.encode()
        stream = [
            b"feature done\n", blobs, b"commit ", ref.encode(), b"\nmark :1\n",
            f"committer shiro-neko <checkpoints@shiro-neko.invalid> {int(time.time())} +0000\n".encode(),
            b"data %d\n" % len(data), data, b"\n",
        ]
        if head is not None:
            stream.append(f"from {head[0]}\n".encode())
        if head is None or head[1] != base:
            stream.append(f'M 040000 {base} ""\n'.encode())
        stream += lines
        stream.append(f'\nreset {_WORKTREE_REF}\nfrom :1\n\nget-mark :1\nls :1 ""\ndone\n'.encode())
        try:
            out = self.git("fast-import", "--quiet", "--done", "--force", "--cat-blob-fd=1", input=b"".join(stream)).split()
        except StoreError:
            # A failed import leaves a crash report holding the stream: not kept.
            for report in self.git_dir.glob("fast_import_crash_*"):
                report.unlink(missing_ok=True)
            raise
        if len(out) < 4 or len(out[0]) != 40:
            raise StoreError(f"git fast-import answered {b' '.join(out)[:200]!r}")
        return out[0].decode(), out[3].decode()

    def _verified_head(self, ref: str, cached: tuple[str, str] | None) -> tuple[str, str] | None:
        """The ref's commit and tree: the cached pair when the ref's file still names that commit
        (one read, no git process), else git's answer; None for a new ref. The commit is forced
        onto the ref, so it must build on the ref's real commit."""
        if cached is not None:
            try:
                if (self.git_dir / ref).read_bytes().strip().decode() == cached[0]:
                    return cached
            except (OSError, UnicodeDecodeError):
                pass  # packed, or never written by this store
        found = self._head(ref)
        return found if found[0] else None

    def _head(self, ref: str) -> tuple[str, str]:
        """The ref's commit and its tree, or ("", "") for a new ref (one git call)."""
        try:
            out = self.git("rev-parse", "--revs-only", ref + "^{commit}", ref + "^{tree}").decode().split()
        except StoreError:
            return "", ""
        return (out[0], out[1]) if len(out) == 2 else ("", "")

    def _write_state(self, state: "_State") -> None:
        # Atomic but not fsynced: the state only saves work (a lost or stale one means a
        # `write-tree` and a `rev-parse` more), and an fsync per checkpoint costs more than the
        # checkpoint on a busy disk.
        tmp = self._state_file.with_name(f".record-state.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(fd, FILE_MODE)  # a temp file an earlier run left with another mode keeps it through O_TRUNC
            f.write(_state_encoder.encode(state))
        os.replace(tmp, self._state_file)

    def _load_state(self) -> "_State":
        try:
            return _state_decoder.decode(self._state_file.read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return _State()  # lost or damaged: the tree is written again, heads asked of git

    def resolve(self, ref: str) -> str:
        try:
            return self.git("rev-parse", "--verify", "--quiet", ref + "^{commit}").decode().strip()
        except StoreError:
            return ""

    def drop_ref(self, ref: str) -> bool:
        """Delete a session's `ref` and the refs of its rewinds' undos (a deleted session's
        checkpoints, features/session_admin.py); False when the store holds neither. Their objects
        are then held by nothing: the daily clean-up (`prune_if_due`) removes them once older than
        PRUNE_GRACE."""
        if not (self.git_dir / "HEAD").exists():
            return False
        with self.locked():
            head = self.resolve(ref)
            undos = self.git("for-each-ref", "--format=%(refname)", _undo_prefix(ref)).decode().split()
            if not head and not undos:
                return False
            commands = [f"delete {name}\n" for name in ([ref] if head else []) + undos]
            if head and self.resolve(_WORKTREE_REF) == head:
                # This session recorded last: the ref HEAD names is its last commit, and would keep
                # its whole history. `status` needs only the tree: a commit of that tree alone.
                tree = self.git("rev-parse", head + "^{tree}").decode().strip()
                alone = self.git("commit-tree", tree, "-m", "the index's last tree").decode().strip()
                commands.append(f"update {_WORKTREE_REF} {alone}\n")
            self.git("update-ref", "--stdin", input="".join(commands).encode())
            state = self._load_state()
            if state.heads.pop(ref, None) is not None:
                self._write_state(state)
            return True

    # -- clean-up --------------------------------------------------------------------------------
    def prune_if_due(self, now: float | None = None) -> bool:
        """The daily clean-up (docs/checkpoints.md, "Clean-up"): when the last one was at least
        PRUNE_EVERY ago, `git gc` repacks the store and drops the objects no ref holds that are
        older than PRUNE_GRACE (`now`: the clock, for tests). A store's first call starts its
        clock (and holds the undos an earlier version left without a ref). True when gc ran.

        Blocking, and under the store's lock (two servers never both run it): call it in a worker
        thread. Never raises: a clean-up that fails (git missing, a damaged store, a read-only
        disk) is logged once per store and tried again a day later; nothing else depends on it."""
        now = time.time() if now is None else now
        try:
            if not (self.git_dir / "HEAD").exists() or not self._prune_due(now):
                return False
            _prune_tried[self.dir] = now
            with self.locked():
                last = self._last_pruned()
                if last is not None and 0 <= now - last < PRUNE_EVERY:
                    return False  # another server's, meanwhile
                if last is None:
                    self._hold_dangling_blobs()
                    self._write_stamp(now)
                    return False
                # Written first: a gc that fails is tried again tomorrow, not after every turn.
                self._write_stamp(now)
                self._gc(now - PRUNE_GRACE)
                return True
        except Exception as exc:  # a clean-up must never break the turn or delete that asked for it
            if self.dir not in _prune_failed:
                _prune_failed.add(self.dir)
                log.warning("checkpoint store %s not cleaned up (tried again in a day): %s", self.dir, exc)
            return False

    def _prune_due(self, now: float) -> bool:
        tried = _prune_tried.get(self.dir)
        if tried is not None and 0 <= now - tried < PRUNE_EVERY:
            return False
        last = self._last_pruned()
        return last is None or not 0 <= now - last < PRUNE_EVERY  # a clock set back: due

    def _last_pruned(self) -> float | None:
        """The last clean-up's time; None when the store never had one, 0 for a damaged stamp."""
        try:
            return float(self._stamp.read_bytes()[:64])
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return 0.0

    def _write_stamp(self, now: float) -> None:
        write_atomic(self._stamp, b"%d\n" % int(now), mode=FILE_MODE)

    def _hold_dangling_blobs(self) -> None:
        """A store's first clean-up: blobs no tree and no ref names are the undos of rewinds
        recorded before undos had refs of their own (`write_undo`); each gets one
        (`refs/undo/legacy/<blob>`, kept for good: their sessions are not known) so gc never
        takes them. In a store made since, there are none."""
        out = self.git("fsck", "--connectivity-only", "--dangling", "--no-reflogs", "--no-progress")
        blobs = [line.split()[2] for line in out.decode().splitlines() if line.startswith("dangling blob ")]
        if blobs:
            self.git("update-ref", "--stdin", input="".join(f"update {_LEGACY_UNDO_REFS}{sha} {sha}\n" for sha in blobs).encode())

    def _gc(self, expire: float) -> None:
        """git's own clean-up: unreachable objects whose pack or file is older than `expire` are
        dropped, the rest of them kept in a cruft pack with their own times (so a deleted
        session's objects go two weeks after their last daily repack), the rest repacked."""
        prune = "--prune=" + time.strftime("%Y-%m-%d %H:%M:%S +0000", time.gmtime(expire))
        # git appends to a reflog that exists whatever core.logAllRefUpdates says: an earlier
        # version's logs go, or their entries would keep every commit they name.
        shutil.rmtree(self.git_dir / "logs", ignore_errors=True)
        try:
            self.git("gc", "--quiet", "--cruft", prune)
        except StoreError:
            # git before 2.37 has no cruft packs: the unreachable objects younger than the
            # grace leave their packs as loose files instead, until they are old enough.
            self.git("gc", "--quiet", prune)

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

    def write_undo(self, ref: str, data: bytes) -> str:
        """A rewind's undo (what it cut from the conversation) as a blob, held by a ref of its own
        under the session's (`refs/undo/<id>/<blob>`): no commit names it, and the clean-up takes
        whatever no ref holds. It goes with the session (`drop_ref`). Call with the lock held."""
        self._ensure()
        sha = self.git("hash-object", "-w", "--stdin", input=data).decode().strip()
        self.git("update-ref", _undo_prefix(ref) + sha, sha)
        return sha

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


def _undo_prefix(ref: str) -> str:
    """`refs/sessions/<id>` -> `refs/undo/<id>`, the folder of that session's undo refs."""
    return _UNDO_REFS + ref.rpartition("/")[2]


def _paths(rels: list[str]) -> bytes:
    return b"".join(os.fsencode(rel) + b"\0" for rel in rels)


def _regular_or_gone(rel: str, root_fd: int) -> bool:
    try:
        return stat.S_ISREG(os.lstat(rel, dir_fd=root_fd).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _file_key(path: Path) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _read_regular(rel: str, root_fd: int) -> tuple[bytes, str] | None:
    """A regular file's bytes and git mode, or None for one gone, a link, or over MAX_FILE_BYTES.
    O_NOFOLLOW: a file swapped for a link meanwhile is never followed out of the workspace."""
    try:
        fd = os.open(rel, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=root_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return None
    return data, "100755" if st.st_mode & stat.S_IXUSR else "100644"


def _quote(rel: str) -> bytes:
    # fast-import reads a path C-quoted when it starts with a quote: every path is, so a name
    # with a quote, a backslash, a newline or a leading space means what it says.
    raw = os.fsencode(rel)
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'


def _is_ignore_file(rel: str) -> bool:
    return rel.rpartition("/")[2] == _IGNORE_FILE


def _under(rel: str, folders: set[str]) -> bool:
    return any(rel.startswith(folder + "/") for folder in folders)


def _nested_repositories(root: Path, rels: list[str]) -> set[str]:
    """The folders on the way to `rels` that hold a `.git` (nested repositories, submodules)."""
    found: set[str] = set()
    seen: set[str] = set()
    for rel in rels:
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if folder in seen:
                continue
            seen.add(folder)
            if os.path.lexists(os.path.join(root, folder, ".git")):
                found.add(folder)
    return found


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
