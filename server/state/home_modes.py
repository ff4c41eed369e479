"""Owner-only modes for everything under the state home (docs/state-files.md, "Who may read it").

The state home holds what the agent read in the user's workspaces: transcripts, short-term
summaries, checkpoints (whole copies of the workspace's files, `.env` included), prompt history.
None of it is for another local user. Every directory under it is therefore made 0700 and every
file 0600 (SQLite databases with their -wal/-shm/-journal, the shadow git store, locks, the cache).

Why per code path and not a process-wide `os.umask(0o077)`: the same process writes into the
user's workspace (write_file, a rewind) and starts the user's commands, whose files must keep the
modes the user's own umask gives them (0644 for a new source file, not 0600). So each writer under
the home asks for private modes itself: `make_private_dirs` for directories, `write_atomic`'s temp
file (already 0600), `private_file` before SQLite opens a database (SQLite creates -wal/-shm/-journal
with the database file's mode), git run with `umask=GIT_UMASK`, lock files opened 0600.

Homes written by earlier versions (0644/0755 throughout) are tightened once per server process by
`tighten_soon`: one walk in a daemon thread, started when the server is initialized (never in the
warm server's parent, which must fork with no thread running). The walk never follows a link and
leaves alone anything owned by another user (a home shared on purpose, a file root dropped in).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
from pathlib import Path

log = logging.getLogger("shiro_neko.state")

DIR_MODE = 0o700
FILE_MODE = 0o600
#: The umask of every git process run on the checkpoint store (state/checkpoint_store.py): git
#: creates objects 0444 and directories 0777 less the umask, so they come out 0400 and 0700.
GIT_UMASK = 0o077
_LOOSE = 0o077  # group and other bits: none may be set on anything under the home

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def make_private_dirs(path: Path) -> None:
    """`mkdir -p path`, every directory it makes 0700 (the XDG base directory rule for a
    directory made to hold a user's data). Existing directories are left to `tighten_soon`."""
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        return
    except FileNotFoundError:
        if path.parent == path:
            raise
        make_private_dirs(path.parent)
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            pass


def private_file(path: Path) -> None:
    """Make `path` exist as a 0600 regular file before another library creates it with its own
    default mode (SQLite: 0644); an existing file of ours loses its group/other bits. Never
    follows a link (SQLite then refuses or we set the entry aside elsewhere)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, FILE_MODE)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EACCES, errno.EPERM, errno.EROFS):
            return  # not ours to fix here: the store's own checks deal with what is there
        raise
    try:
        _tighten_fd(fd, FILE_MODE)
    finally:
        os.close(fd)


def tighten_existing(path: Path) -> None:
    """Drop group/other bits of `path` if it exists and is ours (a database's -wal and -shm)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError:
        return
    try:
        _tighten_fd(fd, FILE_MODE)
    finally:
        os.close(fd)


def _tighten_fd(fd: int, full: int) -> bool:
    """fchmod an open entry of ours with loose bits; True when it changed. On the descriptor, so
    the entry checked is the entry changed (no race with a rename in between)."""
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or not st.st_mode & _LOOSE:
        return False
    os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~_LOOSE & full)
    return True


def tighten_tree(home: Path) -> int:
    """Remove group/other bits from the home and everything under it that is ours; the number of
    entries changed. Links are never followed (nor changed: their mode means nothing on Linux),
    only directories and regular files are changed, and a directory of another user is neither
    changed nor entered. Every entry is opened beneath its parent's descriptor without following
    a link and changed through its own descriptor: a rename racing the walk cannot redirect it."""
    try:
        top = os.open(home, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        return 0  # no home yet (it is made 0700), or a link: not ours to walk
    try:
        return _walk(top, 0)
    finally:
        os.close(top)


_MAX_DEPTH = 64  # kept/<digits>/<workspace path> is the deepest thing we write


def _walk(dir_fd: int, depth: int) -> int:
    """Tighten the open directory `dir_fd` and what it holds."""
    changed = 0
    try:
        st = os.fstat(dir_fd)
        if st.st_uid != os.getuid():
            return 0
        changed += _tighten_fd(dir_fd, DIR_MODE)
        with os.scandir(dir_fd) as scan:
            entries = [(e.name, e.stat(follow_symlinks=False)) for e in scan]
    except OSError as exc:
        log.debug("could not tighten a directory of the state home: %s", exc)
        return changed
    for name, info in entries:
        if info.st_uid != os.getuid():
            continue
        if stat.S_ISDIR(info.st_mode):
            if depth >= _MAX_DEPTH:
                continue
            try:
                fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
            except OSError:
                continue
            try:
                changed += _walk(fd, depth + 1)
            finally:
                os.close(fd)
        elif stat.S_ISREG(info.st_mode) and info.st_mode & _LOOSE:
            try:
                fd = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
            except OSError:
                continue  # gone since, or not readable by its owner: left as it is
            try:
                changed += _tighten_fd(fd, FILE_MODE | 0o100)
            except OSError:
                pass
            finally:
                os.close(fd)
    return changed


_started: int | None = None  # the pid that started the walk: a fork walks again only if asked
_started_lock = threading.Lock()


def tighten_soon(home: Path | None = None) -> threading.Thread | None:
    """Start `tighten_tree` over the state home in a daemon thread, once per process. Called when
    a server is initialized: off the event loop, and after the warm server's fork (server/startup/warm.py
    forks with no thread running). The thread is returned for tests; None when already started."""
    global _started
    with _started_lock:
        if _started == os.getpid():
            return None
        _started = os.getpid()
    if home is None:
        from .paths import shiro_home

        home = shiro_home()
    target = home

    def run() -> None:
        try:
            changed = tighten_tree(target)
        except Exception:  # noqa: BLE001 - a tightening that fails must never take the server down
            log.warning("could not tighten the modes under %s", target, exc_info=True)
            return
        if changed:
            log.info("made %d entries under %s private to this user (0700/0600)", changed, target)

    thread = threading.Thread(target=run, name="shiro-home-modes", daemon=True)
    thread.start()
    return thread
