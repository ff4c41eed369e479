"""Where the warm server's socket lives and who may use it (stdlib only: the client imports it).

The socket sits in a directory only its user can enter: `$XDG_RUNTIME_DIR/shiro-neko` (the
per-user runtime directory, mode 0700 by the login manager) or else `/tmp/shiro-neko-<uid>`. That
directory is created 0700 and, before every use, must be a real directory (not a symlink), owned
by this user, with no group or other bits; otherwise the warm server is not used at all. On top
of that, both ends check the peer's uid with SO_PEERCRED: a process of another user that somehow
reached the socket is refused before anything runs, and a client never talks to a socket served
by another user.

The socket's name carries a key of everything a warm server must match to be interchangeable
with a freshly started one: the interpreter, the shiro-neko code (every module's path and mtime,
so an edited or upgraded install never runs stale code) and the state home.
"""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import struct
import sys
from pathlib import Path

ENV_SWITCH = "SHIRO_WARM"  # "0" turns the warm server off for that run
ENV_IDLE = "SHIRO_WARM_IDLE"  # seconds a warm server waits for its next client (default 600)
DEFAULT_IDLE_S = 600.0
PROTOCOL_VERSION = 1
_PACKAGE = Path(__file__).resolve().parent


class UnsafeDirectory(Exception):
    """The socket directory is not this user's alone."""


def enabled(env: dict[str, str] | os._Environ[str]) -> bool:
    return env.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


def idle_seconds(env: dict[str, str] | os._Environ[str]) -> float:
    try:
        return max(1.0, float(env.get(ENV_IDLE, DEFAULT_IDLE_S)))
    except ValueError:
        return DEFAULT_IDLE_S


def runtime_dir(env: dict[str, str] | os._Environ[str]) -> Path:
    base = env.get("XDG_RUNTIME_DIR")
    if base and os.path.isabs(base):
        return Path(base) / "shiro-neko"
    return Path("/tmp") / f"shiro-neko-{os.getuid()}"


def checked_dir(path: Path, create: bool) -> Path:
    """`path` if it is a directory of this user's alone (made so when `create`), else UnsafeDirectory."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise UnsafeDirectory(f"cannot create {path}: {exc}") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise UnsafeDirectory(f"{path}: {exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(f"{path} is not a directory")
    if st.st_uid != os.getuid():
        raise UnsafeDirectory(f"{path} belongs to uid {st.st_uid}, not {os.getuid()}")
    if st.st_mode & 0o077:
        raise UnsafeDirectory(f"{path} is open to other users (mode {stat.S_IMODE(st.st_mode):o})")
    return path


def code_fingerprint() -> str:
    """The interpreter and every module's path and mtime. Every `shiro` start computes it before
    it can attach, so it walks the tree with os.scandir (no Path objects, no glob matching)."""
    digest = hashlib.sha256()
    digest.update(os.path.realpath(sys.executable).encode())
    digest.update(sys.version.encode())
    files: list[tuple[str, int]] = []
    folders = [str(_PACKAGE)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name != "__pycache__":
                                folders.append(entry.path)
                        elif entry.name.endswith(".py"):
                            files.append((entry.path, entry.stat().st_mtime_ns))
                    except OSError:
                        pass
        except OSError:
            pass
    for path, mtime_ns in sorted(files):
        digest.update(f"{path}:{mtime_ns}".encode())
    return digest.hexdigest()


def home_of(env: dict[str, str] | os._Environ[str]) -> str:
    """What decides the state home (state/paths.py): $SHIRO_NEKO_HOME, else the XDG data dir."""
    return "\0".join(env.get(name, "") for name in ("SHIRO_NEKO_HOME", "XDG_DATA_HOME", "HOME"))


def socket_path(env: dict[str, str] | os._Environ[str], create: bool = False) -> Path:
    key = hashlib.sha256(f"{code_fingerprint()}\0{home_of(env)}".encode()).hexdigest()[:20]
    return checked_dir(runtime_dir(env), create) / f"warm-{key}.sock"


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid
