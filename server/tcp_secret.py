"""The secret a `shiro-lsp --tcp` client presents (tcp_guard.py), and where it is kept. Stdlib only.

Three sources, first found wins:
- SHIRO_LSP_TOKEN: the user's own token (an environment is readable by its user alone);
- `--token-file PATH`: read from PATH when it exists (it must be a regular file of this user's
  that no one else may read), else a new token is written there (0600) and kept for later starts;
- neither: a new random token per start in `<runtime dir>/lsp-<port>.token` (the warm server's
  private directory, server/startup/warm_socket.py: 0700, this user's, checked before use), removed at exit.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

ENV_TOKEN = "SHIRO_LSP_TOKEN"
MIN_LENGTH = 16  # a token a user picked must still not be guessable in a few tries


class TokenError(Exception):
    """The token could not be made, read or trusted: the server does not start."""


@dataclass(frozen=True)
class Secret:
    token: str
    path: Path | None  # where a client reads it; None when it came from the environment
    remove_at_exit: bool = False

    def forget(self) -> None:
        if self.remove_at_exit and self.path is not None:
            try:
                self.path.unlink()
            except OSError:
                pass


def _checked(token: str, source: str) -> str:
    token = token.strip()
    if len(token) < MIN_LENGTH:
        raise TokenError(f"the token in {source} is shorter than {MIN_LENGTH} characters")
    return token


def _read(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise TokenError(f"cannot read the token file {path}: {exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise TokenError(f"the token file {path} is not a regular file of this user's")
        if st.st_mode & 0o077:
            raise TokenError(f"the token file {path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); chmod 600 it")
        return _checked(os.read(fd, 4096).decode("utf-8", "replace"), str(path))
    finally:
        os.close(fd)


def _write_new(path: Path, replace: bool) -> str:
    token = secrets.token_urlsafe(32)
    if replace:
        try:
            path.unlink()  # a stale file of an earlier start on this port
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise TokenError(f"cannot replace {path}: {exc}") from None
    try:
        # O_EXCL: never through a link or into a file someone else made; 0600 from birth.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise TokenError(f"cannot create the token file {path}: {exc}") from None
    try:
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    return token


def load(token_file: str | None, port: int, env: dict[str, str] | os._Environ[str]) -> Secret:
    from_env = env.get(ENV_TOKEN)
    if from_env:
        return Secret(_checked(from_env, f"${ENV_TOKEN}"), None)
    if token_file:
        path = Path(token_file).expanduser().absolute()
        if path.exists() or path.is_symlink():
            return Secret(_read(path), path)
        return Secret(_write_new(path, replace=False), path)
    from .startup import warm_socket

    try:
        folder = warm_socket.checked_dir(warm_socket.runtime_dir(env), create=True)
    except warm_socket.UnsafeDirectory as exc:
        raise TokenError(f"no private directory for the token: {exc}; pass --token-file or set ${ENV_TOKEN}") from None
    path = folder / f"lsp-{port}.token"
    return Secret(_write_new(path, replace=True), path, remove_at_exit=True)
