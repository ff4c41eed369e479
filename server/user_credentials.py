"""The terminal's endpoint and API key, kept for the next runs (docs/models.md "Where the key lives").

- the key: in the OS keyring through the `keyring` library (macOS Keychain, Windows Credential
  Locker, the Secret Service of GNOME Keyring or KWallet on Linux), service `shiro-neko`, user
  `api-key`, when keyring has a working backend; else in `credentials.json` beside the user
  settings file (`$SHIRO_NEKO_CONFIG`'s folder, else `~/.config/shiro-neko/`), mode 0600 in a
  0700 folder, written atomically;
- the endpoint (not a secret): in that same `credentials.json`, as `baseUrl`, with `store` saying
  where the key went (`keyring` or `file`), so a run that finds no such file never imports keyring
  (~0.1 s) and a user with `OPENAI_API_KEY` set pays nothing for this.

The client hands the key to its server with `shiro.setCredentials` (memory only there); it never
goes into an environment variable, a settings file or a log. A shared leaf (tests/unit/
test_architecture.py SHARED_LEAVES): the standard library, platformdirs (through user_settings),
state/atomic.py and keyring.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .state.atomic import SMALL_MAX_BYTES, StateError, read_state_file, write_atomic
from .user_settings import user_settings_path

SERVICE = "shiro-neko"
ACCOUNT = "api-key"
FILE_NAME = "credentials.json"


@dataclass(frozen=True)
class Credentials:
    base_url: str | None
    api_key: str | None
    where: str  # for the user: "the OS keyring (<backend>)" or the file's path


def credentials_path() -> Path:
    return user_settings_path().parent / FILE_NAME


def _usable_keyring() -> object | None:
    """keyring's backend when it has a working one (priority > 0: not the fail or null backend)."""
    try:
        import keyring  # noqa: PLC0415 - ~0.1 s, only on a first run or when the file says so
        from keyring.backends import fail
    except ImportError:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken backend configuration is no keyring
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    return backend


def load() -> Credentials | None:
    """What a first run stored, or None (nothing stored, or the file is unreadable)."""
    path = credentials_path()
    try:
        raw = read_state_file(path, SMALL_MAX_BYTES)
    except (OSError, StateError):
        return None
    if raw is None:
        return None
    try:
        data = json.loads(raw[0])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    base_url = data.get("baseUrl") if isinstance(data.get("baseUrl"), str) and data.get("baseUrl") else None
    if data.get("store") == "keyring":
        key: str | None = None
        backend = _usable_keyring()
        if backend is not None:
            try:
                key = backend.get_password(SERVICE, ACCOUNT)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a locked or gone keyring: asked again at the first run
                key = None
        return Credentials(base_url, key or None, f"the OS keyring ({type(backend).__name__})")
    key = data.get("apiKey") if isinstance(data.get("apiKey"), str) else None
    return Credentials(base_url, key or None, str(path))


def save(base_url: str | None, api_key: str | None) -> Credentials:
    """Keep the endpoint and the key: the key in the keyring when it works, else in the 0600 file."""
    path = credentials_path()
    record: dict[str, str] = {"baseUrl": base_url} if base_url else {}
    where = str(path)
    backend = _usable_keyring() if api_key else None
    if backend is not None:
        try:
            backend.set_password(SERVICE, ACCOUNT, api_key)  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a locked keyring: the file instead
            backend = None
        else:
            record["store"] = "keyring"
            where = f"the OS keyring ({type(backend).__name__})"
    if backend is None:
        record["store"] = "file"
        if api_key:
            record["apiKey"] = api_key
    write_atomic(path, json.dumps(record, indent=2).encode() + b"\n", mode=0o600)
    return Credentials(base_url, api_key, where)
