"""Issue 35, 9b: the home directory is hidden from a sandboxed command, but for the toolchains a
build reads, against the real bwrap binary and real files in a temporary HOME.

Each test below failed on the code before the home was hidden (the sandbox hid a list of
credential stores and missed these).
"""

from __future__ import annotations

import shutil
import sys
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.sandbox import Sandbox
from tests.unit.test_sandbox import _require, host, run  # noqa: F401 - host is a fixture

# Credential paths the sandbox missed (the list), each with a secret of its own.
MISSED = {
    ".bash_history": "HISTORY-SECRET",
    ".codex/auth.json": "CODEX-TOKEN",
    ".claude/.credentials.json": "CLAUDE-TOKEN",
    ".pgpass": "PGPASS-SECRET",
    ".vault-token": "VAULT-TOKEN",
    ".cache/huggingface/token": "HF-TOKEN",
    ".config/rclone/rclone.conf": "RCLONE-SECRET",
    ".mozilla/firefox/abc.default/logins.json": "FIREFOX-LOGINS",
    ".config/google-chrome/Default/Cookies": "CHROME-COOKIES",
    ".gitconfig": "GITCONFIG-TOKEN",  # not on the allowlist: url rewrites may carry a token
    "notes/private.txt": "PRIVATE-NOTES",  # anything else in the home
    ".cargo/credentials.toml": "CARGO-TOKEN",  # inside an allowlisted toolchain
}
# Toolchain files a build reads: readable.
TOOLCHAINS = {
    ".cargo/registry/index/crate": "CARGO-REGISTRY",
    ".rustup/settings.toml": "RUSTUP-SETTINGS",
    ".npm/_cacache/index": "NPM-CACHE",
    ".cache/pip/http/entry": "PIP-CACHE",
    ".local/bin/tool": "LOCAL-BIN",
    "go/pkg/mod/module": "GO-MODULE",
    ".m2/repository/artifact": "MAVEN-REPOSITORY",
}


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary HOME (not under /tmp: that is private in the sandbox anyway) with every file above."""
    path = Path.home() / f".shiro-sandbox-home-{uuid.uuid4().hex}"
    for rel, text in {**MISSED, **TOOLCHAINS}.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _cat(home: Path, names: dict[str, str]) -> str:
    return " ".join(str(home / rel) for rel in names)


def _leaked(out: str) -> list[str]:
    return [text for text in MISSED.values() if text in out]


async def test_the_missed_credential_paths_are_unreadable_and_toolchains_readable(host: DiskToolHost, home: Path) -> None:
    sandbox = _require()
    _, out = await run(sandbox, host, f"cat {_cat(home, MISSED)} {_cat(home, TOOLCHAINS)} 2>/dev/null; ls -A {home}")
    assert not _leaked(out)
    assert all(text in out for text in TOOLCHAINS.values())
    assert "notes" not in out and ".bash_history" not in out  # the home lists only what came back


async def test_credentials_stay_hidden_when_the_workspace_holds_the_home(home: Path) -> None:
    """The home cannot be hidden whole when it is the workspace: the credential list holds then."""
    sandbox = _require()
    host = DiskToolHost(home)
    listed = {k: v for k, v in MISSED.items() if k not in (".gitconfig", "notes/private.txt")}
    _, out = await run(sandbox, host, f"cat {_cat(home, listed)} 2>/dev/null; cat notes/private.txt")
    assert not [text for text in listed.values() if text in out]
    assert "PRIVATE-NOTES" in out  # the workspace's own files are the point


async def test_a_workspace_under_the_home_stays_writable(home: Path) -> None:
    sandbox = _require()
    root = home / "projects" / "ws"
    root.mkdir(parents=True)
    host = DiskToolHost(root)
    _, out = await run(sandbox, host, f"echo made > made.txt; cat {home}/notes/private.txt; touch {home}/escaped; echo done")
    assert (root / "made.txt").read_text() == "made\n"
    assert "PRIVATE-NOTES" not in out and "done" in out
    assert not (home / "escaped").exists()  # the home is a private tmpfs: nothing reaches the real one


async def test_a_workspace_inside_an_allowlisted_toolchain_stays_writable(home: Path) -> None:
    """GOPATH layout: ~/go is read-only in the sandbox, a workspace under it is still writable."""
    sandbox = _require()
    root = home / "go" / "src" / "example.com" / "ws"
    root.mkdir(parents=True)
    _, out = await run(sandbox, DiskToolHost(root), "echo made > made.txt; cat made.txt")
    assert (root / "made.txt").read_text() == "made\n", out


async def test_sandbox_allow_read(host: DiskToolHost, home: Path) -> None:
    sandbox = _require()
    (home / "data").mkdir()
    (home / "data" / "model.txt").write_text("MODEL-WEIGHTS")
    _, before = await run(sandbox, host, f"cat {home}/data/model.txt {home}/.pgpass")
    assert "MODEL-WEIGHTS" not in before and "PGPASS-SECRET" not in before
    allowed = Sandbox(sandbox.mode, sandbox.bwrap, allow_read=("~/data", "~/.pgpass"))
    _, after = await run(allowed, host, f"cat {home}/data/model.txt {home}/.pgpass; cat {home}/.vault-token; touch {home}/data/w")
    # `~` expanded; a built-in credential path comes back only when named exactly; read-only.
    assert "MODEL-WEIGHTS" in after and "PGPASS-SECRET" in after and "VAULT-TOKEN" not in after
    assert not (home / "data" / "w").exists()


async def test_the_product_under_the_hidden_home_stays_reachable(host: DiskToolHost, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's interpreter and package (here under /work and /root/.pyenv, say) run inside."""
    sandbox = _require()
    prefix = Path(sys.prefix).resolve()
    monkeypatch.setenv("HOME", str(prefix.parent))  # the virtualenv lies in the hidden home
    _, out = await run(sandbox, host, f"{sys.executable} -c 'import shiro_neko; print(\"imported\")'")
    assert "imported" in out, out


async def test_other_accounts_homes_are_hidden(host: DiskToolHost, home: Path) -> None:
    """As root (the command's uid outside is 0) every home under /home was readable, and so is a
    user's 0755 home to anyone: another account's files stay out of reach; a workspace inside one
    is still the workspace."""
    sandbox = _require()
    other = Path("/home") / f"shiro-other-{uuid.uuid4().hex[:8]}"
    try:
        (other / "proj").mkdir(parents=True)
        (other / ".env").write_text("OTHER-USER-SECRET")
        (other / "proj" / "main.py").write_text("print('ws')\n")
        _, out = await run(sandbox, host, f"cat {other}/.env; echo listed: $(ls -A {other}); echo done")
        assert "OTHER-USER-SECRET" not in out and "listed:\n" in out and "done" in out, out
        _, inside = await run(sandbox, DiskToolHost(other / "proj"), f"cat main.py; cat {other}/.env; echo made > made.txt")
        assert "print('ws')" in inside and "OTHER-USER-SECRET" not in inside
        assert (other / "proj" / "made.txt").read_text() == "made\n"
    finally:
        shutil.rmtree(other, ignore_errors=True)


async def test_credential_stores_the_environment_moves_out_of_the_home_stay_hidden(
    host: DiskToolHost, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """XDG_CONFIG_HOME, XDG_DATA_HOME, GNUPGHOME, AWS_SHARED_CREDENTIALS_FILE, HISTFILE, CARGO_HOME
    outside the home: the stores they hold were readable (the hidden list was home-relative only)."""
    sandbox = _require()
    base = Path("/var/tmp") / f"shiro-moved-{uuid.uuid4().hex[:8]}"  # /tmp is private in the sandbox anyway
    stores = {
        "cfg/gh/hosts.yml": "GH-TOKEN", "data/keyrings/login.keyring": "KEYRING-SECRET",
        "gnupg/private.key": "GPG-SECRET", "aws-credentials": "AWS-SECRET", "history": "HISTORY-SECRET",
        "cargo/credentials.toml": "CARGO-SECRET", "cargo/registry/index": "CARGO-REGISTRY",
    }
    try:
        for rel, text in stores.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text)
        for variable, rel in {"XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "data", "GNUPGHOME": "gnupg",
                              "AWS_SHARED_CREDENTIALS_FILE": "aws-credentials", "HISTFILE": "history",
                              "CARGO_HOME": "cargo"}.items():
            monkeypatch.setenv(variable, str(base / rel))
        _, out = await run(sandbox, host, " ".join(f"cat {base / rel};" for rel in stores) + " echo done")
        leaked = [text for text in stores.values() if text in out and text != "CARGO-REGISTRY"]
        assert not leaked and "CARGO-REGISTRY" in out and "done" in out, out
    finally:
        shutil.rmtree(base, ignore_errors=True)
