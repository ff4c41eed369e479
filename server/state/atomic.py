"""Primitives every state file under SHIRO_NEKO_HOME is written and read through.

- `write_atomic`: temp file in the same directory, fsync, `os.replace`, fsync of the directory, so a
  process killed at any instant leaves either the old or the new file, never a torn one.
- `decode_or_corrupt` / `read_json_or_corrupt`: a file that does not decode is a `CorruptFile`; before
  the caller hears about it the bytes are copied aside (`<name>.corrupt-<UTC digits>`, once per
  content) and one warning per file per process is logged. The original is never touched here.
- `read_state_file`: the one way a state file is read. Only a regular file of at most a size cap is
  read (opened `O_NOFOLLOW | O_NONBLOCK`, checked with `fstat`); a FIFO, socket, device, link or
  oversized file is damaged: moved aside (`<name>.damaged-<UTC digits>`) when it can be, else left
  and ignored, with one warning per file per process. Nothing a state directory holds can block
  a command or fill the memory.
- `FileLease`: an exclusive, non-blocking ownership lock with the holder's PID inside (flock based,
  so a lock left by a dead process is free again the moment its PID is gone).
- `file_lock`: the blocking cross-process lock used around read-merge-write updates.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import socket
import stat as stat_module
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar, cast

import msgspec

from .home_modes import FILE_MODE, make_private_dirs

log = logging.getLogger("shiro_neko.state")

T = TypeVar("T")

#: Seconds to wait for another process's read-merge-write; a full index rebuild of ~1 GB fits.
LOCK_TIMEOUT = 120.0


class StateError(Exception):
    """Base of every state error; `str()` is the message a person sees."""


class StateUnwritable(StateError):
    """The state home cannot be written (read-only, full, no permission): nothing will be saved."""

    def __init__(self, path: Path, exc: OSError) -> None:
        self.path = path
        self.errno = exc.errno
        why = {errno.EROFS: "is on a read-only file system", errno.ENOSPC: "is on a full disk",
               errno.EDQUOT: "is over its disk quota"}.get(exc.errno or 0, f"cannot be written ({exc.strerror or exc})")
        super().__init__(f"nothing can be saved: {path} {why}")


_UNWRITABLE = (errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM)


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """OSErrors that mean "this home cannot be written" become StateUnwritable, a StateError every
    command already turns into a refusal with its reason (never -32603 with a raw OSError)."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _UNWRITABLE:
            raise StateUnwritable(path, exc) from exc
        raise


class CorruptFile(StateError):
    def __init__(self, path: Path, reason: str, copy: Path | None) -> None:
        self.path = path
        self.reason = reason
        self.copy = copy
        where = f"; a copy is at {copy}" if copy else "; copying it aside failed"
        super().__init__(f"{path} is corrupt ({reason}); the file was left as it is{where}")


# ---------------------------------------------------------------------------------------------
# writing


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (the rename lives in the directory, not the file)."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int | None = None, private: bool = True) -> None:
    """Replace `path` with `data` so that readers and crashes see the old or the new bytes only.

    `mode` sets the new file's permissions (the temp file is created 0600, so a state file is
    0600 unless asked otherwise). Missing directories are made 0700 (state/home_modes.py);
    `private=False` (a rewind writing the user's workspace) makes them as `mkdir -p` does."""
    import tempfile  # here, not at the top: a process that only reads (`shiro sessions`) never needs it

    directory = path.parent
    with writing(directory):
        if private:
            make_private_dirs(directory)
        else:
            directory.mkdir(parents=True, exist_ok=True)
        # Dot-prefixed so directory scans that look for `<uuid>.json` never mistake it for a state file.
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with writing(directory):
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(directory)


# ---------------------------------------------------------------------------------------------
# corrupt files

_warned: set[str] = set()
_warned_lock = threading.Lock()


def utc_digits(micro: bool = False) -> str:
    fmt = "%Y%m%d%H%M%S%f" if micro else "%Y%m%d%H%M%S"
    return datetime.now(timezone.utc).strftime(fmt)


def copy_aside_corrupt(path: Path, data: bytes | None = None) -> Path:
    """Copy `data` (default: the file's bytes) to `<name>.corrupt-<UTC digits>` beside `path`.

    Idempotent per content: when a sibling copy already holds the same bytes that copy is returned,
    so two listings (or two processes under a lock) never pile up duplicates. Raises OSError when the
    copy cannot be written; callers that mean to overwrite `path` must then not do so.
    """
    if data is None:
        data = path.read_bytes()
    prefix = f"{path.name}.corrupt-"
    try:
        siblings = [e for e in os.scandir(path.parent) if e.name.startswith(prefix)]
    except FileNotFoundError:
        siblings = []
    for entry in siblings:
        try:
            if entry.stat().st_size == len(data) and Path(entry.path).read_bytes() == data:
                return Path(entry.path)
        except OSError:
            continue
    copy = path.with_name(prefix + utc_digits())
    if copy.exists():  # another corruption of the same file within this second
        copy = path.with_name(prefix + utc_digits(micro=True))
    write_atomic(copy, data)
    return copy


def warn_corrupt_once(path: Path, reason: str, aside: str) -> None:
    """One warning per bad file per process: listings run often and must not flood the log.

    `aside` says where the copy went, e.g. "copied to <path>".
    """
    key = str(path)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning("corrupt state file %s (%s): left as it is, %s", path, reason, aside)


def corrupt_reason(data: bytes, decoder: msgspec.json.Decoder[T], check: Callable[[T], str | None] | None) -> str | None:
    """Why `data` is not a valid value of the decoder's type, or None when it is."""
    if not data.strip():
        return "empty file"
    try:
        value = decoder.decode(data)
    except msgspec.ValidationError as exc:
        return f"wrong types: {exc}"
    except msgspec.DecodeError as exc:  # truncated, null bytes, not JSON at all
        return f"not valid JSON: {exc}"
    return check(value) if check is not None else None


def decode_or_corrupt(
    path: Path,
    data: bytes,
    decoder: msgspec.json.Decoder[T],
    check: Callable[[T], str | None] | None = None,
) -> T:
    """Decode `data` read from `path`; on failure copy it aside, warn once and raise CorruptFile."""
    reason: str | None
    try:
        value = decoder.decode(data)
        reason = check(value) if check is not None else None
    except msgspec.DecodeError:
        reason = corrupt_reason(data, decoder, check)  # the slow path words the reason
        value = None  # type: ignore[assignment]
    if reason is None:
        return cast(T, value)
    try:
        copy: Path | None = copy_aside_corrupt(path, data)
    except OSError as exc:
        log.error("could not copy corrupt %s aside: %s", path, exc)
        copy = None
    warn_corrupt_once(path, reason, f"copied to {copy}" if copy else "copying it aside failed")
    raise CorruptFile(path, reason, copy)


def read_json_or_corrupt(
    path: Path,
    decoder: msgspec.json.Decoder[T],
    check: Callable[[T], str | None] | None = None,
    max_bytes: int | None = None,
) -> T | None:
    """The decoded file, None when it does not exist, CorruptFile (after copying aside) when bad;
    DamagedFile (a CorruptFile) when it is not a regular file of at most `max_bytes`."""
    read = read_state_file(path, DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
    if read is None:
        return None
    return decode_or_corrupt(path, read[0], decoder, check)


# ---------------------------------------------------------------------------------------------
# reading: regular files only, bounded

#: Size caps per kind of state file: far above any real one, far below what exhausts memory.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
SESSION_MAX_BYTES = 1024 * 1024 * 1024  # a long session with big tool outputs and pasted prompts
SMALL_MAX_BYTES = 4 * 1024 * 1024  # settings, trust records, locks' companions


class DamagedFile(CorruptFile):
    """A state file that is not a regular file of a sane size: moved aside when possible."""

    def __init__(self, path: Path, reason: str, moved: Path | None) -> None:
        StateError.__init__(
            self,
            f"{path} is {reason}; "
            + (f"it was moved aside to {moved}" if moved else "it could not be moved aside and is ignored"),
        )
        self.path = path
        self.reason = reason
        self.copy = moved


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages (also workspace_fs's NotRegularFile)."""
    if stat_module.S_ISLNK(mode):
        return "a symbolic link"
    if stat_module.S_ISDIR(mode):
        return "a directory"
    if stat_module.S_ISFIFO(mode):
        return "a FIFO"
    if stat_module.S_ISSOCK(mode):
        return "a socket"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _damaged(path: Path, reason: str) -> DamagedFile:
    """Move `path` aside (the entry itself: a link or FIFO is renamed, never opened) and warn once."""
    moved: Path | None = path.with_name(f"{path.name}.damaged-{utc_digits(micro=True)}")
    try:
        os.rename(path, moved)  # type: ignore[arg-type]
    except OSError as exc:
        log.debug("could not move %s aside: %s", path, exc)
        moved = None
    warn_corrupt_once(path, reason, f"moved to {moved}" if moved else "could not be moved aside; ignored")
    return DamagedFile(path, reason, moved)


def read_state_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, os.stat_result] | None:
    """(bytes, fstat of what was read) of the regular file `path`; None when it does not exist.

    Raises DamagedFile (after moving the entry aside when it can) for a link, FIFO, socket,
    device, directory or a file over `max_bytes`; other OSErrors (permissions) as they come."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EOPNOTSUPP):  # link, socket, ...
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                raise exc from None
            raise _damaged(path, file_kind(mode)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat_module.S_ISREG(st.st_mode):
            raise _damaged(path, file_kind(st.st_mode))
        if st.st_size > max_bytes:
            raise _damaged(path, f"over the {max_bytes // (1024 * 1024)} MB a file of its kind may hold ({st.st_size:,} bytes)")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:  # read to the end, never past the cap (a file growing as we read)
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise _damaged(path, f"over the {max_bytes // (1024 * 1024)} MB a file of its kind may hold")
        return b"".join(chunks), st
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# locks


@contextmanager
def file_lock(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Blocking cross-process lock on `path` (created if missing, kept: waiters share its inode)."""
    import filelock  # here, not at the top: ~10-40 ms of import a read-only listing never needs

    with writing(path.parent):
        make_private_dirs(path.parent)
    # thread_local=False: callers serialise their own threads; a fresh object per use keeps two
    # stores in one process as independent as two processes (flock is per open file). mode: the
    # lock file is the home's like every other (0600), not filelock's 0644.
    lock = filelock.FileLock(str(path), timeout=timeout, mode=FILE_MODE, thread_local=False)
    try:
        with writing(path):
            lock.acquire()
    except filelock.Timeout as exc:
        raise StateError(f"timed out after {timeout:.0f} s waiting for the lock {path}") from exc
    try:
        yield
    finally:
        lock.release()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def read_lease_pid(path: Path) -> int | None:
    """PID written by the holder of a lease file (first line), None when absent or unreadable."""
    try:
        first = path.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0].strip()
        return int(first)
    except (OSError, ValueError):
        return None


_fallback_held: set[str] = set()  # leases this process holds in pid-file mode
_fallback_lock = threading.Lock()


class FileLease:
    """Exclusive ownership of `path`, held until `release()` or the holder's death.

    flock is the authority: the kernel drops it when the holding process dies, which is exactly
    "a lock left by a dead process is cleared", and it is immune to PID reuse. The PID written
    inside is for the busy message and for filesystems without flock, where liveness of that PID
    is the (best effort) fallback. The file is unlinked on release so that closed sessions leave
    no lock files behind; `try_acquire` re-checks the inode to stay correct against that unlink.
    """

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd
        self._released = False

    @classmethod
    def try_acquire(cls, path: Path) -> FileLease | None:
        """The lease, or None when a live process holds it."""
        with writing(path.parent):
            make_private_dirs(path.parent)
        for _ in range(20):  # only loops when a holder unlinked the file under us
            with writing(path):
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    return None
                return cls._pid_fallback(path)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # we locked an inode its holder just unlinked: try the new one
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n{socket.gethostname()}\n".encode())
            return cls(path, fd)
        return None

    @classmethod
    def _pid_fallback(cls, path: Path) -> FileLease | None:
        """Without flock: the lease is free when its PID is gone (best effort, not race free)."""
        pid = read_lease_pid(path)
        with _fallback_lock:
            if pid == os.getpid() and str(path) in _fallback_held:
                return None
            if pid is not None and pid != os.getpid() and pid_alive(pid):
                return None
            write_atomic(path, f"{os.getpid()}\n{socket.gethostname()}\n".encode())
            _fallback_held.add(str(path))
        return cls(path, None)

    def release(self) -> None:
        """Give the lease back: unlink the file while still holding the flock, then close.

        A waiter that opened the old inode wins a lock on a file no longer at `path`, notices the
        inode mismatch in `try_acquire` and retries on the new file.
        """
        fd, self._fd = self._fd, None
        if self._released:
            return
        self._released = True
        try:
            if fd is None:  # pid fallback: only remove it while it still names us
                with _fallback_lock:
                    _fallback_held.discard(str(self.path))
                if read_lease_pid(self.path) == os.getpid():
                    os.unlink(self.path)
            elif os.stat(self.path).st_ino == os.fstat(fd).st_ino:
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        finally:
            if fd is not None:
                os.close(fd)
