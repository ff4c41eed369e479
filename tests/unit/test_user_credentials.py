"""The terminal's kept endpoint and key (server/user_credentials.py): in the keyring when keyring
has a working backend (here a real in-memory backend through keyring's own plugin API), else in a
0600 credentials.json in a 0700 folder beside the settings file; read back by the next run."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail

from shiro_neko import user_credentials

KEY = "sk-kept-key-1234567890"


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.secrets.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.secrets[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.secrets.pop((service, username), None)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cfg" / "settings.json"
    monkeypatch.setenv("SHIRO_NEKO_CONFIG", str(path))
    yield path.parent
    keyring.set_keyring(fail.Keyring())


def test_with_a_keyring_the_key_goes_there_and_the_file_holds_none(config: Path) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    kept = user_credentials.save("http://127.0.0.1:4000/v1", KEY)
    assert kept.where == "the OS keyring (MemoryKeyring)"
    assert backend.secrets == {("shiro-neko", "api-key"): KEY}
    path = config / "credentials.json"
    assert json.loads(path.read_text()) == {"baseUrl": "http://127.0.0.1:4000/v1", "store": "keyring"}
    assert KEY not in path.read_text()
    assert user_credentials.load() == user_credentials.Credentials("http://127.0.0.1:4000/v1", KEY, kept.where)


def test_without_a_keyring_the_key_goes_to_a_0600_file(config: Path) -> None:
    keyring.set_keyring(fail.Keyring())
    kept = user_credentials.save(None, KEY)
    path = config / "credentials.json"
    assert kept.where == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(config.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"store": "file", "apiKey": KEY}
    assert user_credentials.load() == user_credentials.Credentials(None, KEY, str(path))


def test_nothing_kept_or_a_bad_file_is_none(config: Path) -> None:
    assert user_credentials.load() is None
    config.mkdir(parents=True, exist_ok=True)
    (config / "credentials.json").write_text("{not json")
    assert user_credentials.load() is None
