"""The operating-system sandbox `run_command` runs in: bubblewrap on Linux, set up for hostile code.

What a sandboxed command gets (docs/security.md, "Sandbox", says it for users):
- every namespace bubblewrap can unshare (`--unshare-all`): no network but its own loopback, its
  own pids (the server's processes and /proc/*/environ are out of sight), ipc, uts, cgroup; a user
  namespace in which it can create no other (`--disable-userns`), no capability at all
  (`--cap-drop ALL`: for a uid-0 caller bubblewrap otherwise keeps every one), its own session
  (`--new-session`: no TIOCSTI into the user's terminal), and death with the server
  (`--die-with-parent`);
- when the server runs as root, uid/gid 65534 inside;
- the host's file system read-only, a private empty tmpfs on /tmp and on /run (where the sockets
  of D-Bus, Docker and the user's runtime directory live: a network namespace does not cover Unix
  sockets on the file system), the workspace writable (`workspace-write`) or not (`read-only`);
- the home directory (`$HOME`, and the account's own, `/root` for root) replaced by an empty
  private tmpfs, with the toolchains a build reads bound back read-only (`HOME_READABLE`, PATH
  entries, the virtualenv, the product's interpreter, `sandboxAllowRead`); the workspace stays
  writable even when it lies there;
- hidden (an empty read-only tmpfs over a directory, /dev/null over a file): the state home, the
  warm server's runtime directory, shiro-neko's user configuration, common credential stores, and
  whatever the `sandboxHide` setting names; the product's own install read-only even inside the
  workspace;
- the workspace's git metadata (`.git`, where a gitfile points, nested repositories one level
  down) read-only: git runs what `.git/config` and `.git/hooks` name at the user's next `git
  status`, outside any sandbox (git_metadata.py);
- an environment built from an allowlist (`command_env`), never the server's own.

We use bubblewrap (Debian's `bubblewrap` package) rather than hand-written namespace code: it is
the sandbox Flatpak builds on, needs no daemon, and works unprivileged and as root. Whether it
works is probed once by running it (a binary on PATH is not enough: a kernel without user
namespaces, or a container without mount rights, makes it fail at start); the reason it does not
is kept for `shiro/status.sandbox`.
"""

from __future__ import annotations

import glob
import logging
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping

from ...protocol import SandboxMode, SandboxStatus
from .git_metadata import git_mount_args

log = logging.getLogger(__name__)

__all__ = ["Sandbox", "SandboxMode", "Widening", "sandbox_for", "sandbox_status", "command_env", "blocked_note"]

# The uid/gid a command runs as inside when the server is root (Debian's `nobody`/`nogroup`).
_NOBODY = 65534

# Credential stores under the home directory, hidden whatever the settings say. The whole home is
# hidden anyway (`HOME_READABLE` says what comes back); this list still counts where the home
# cannot be hidden (the workspace holds it) and inside what comes back (`.cargo/credentials`).
HOME_SECRETS = (
    ".ssh", ".aws", ".gnupg", ".config/gh", ".netrc", ".docker", ".kube",
    ".git-credentials", ".config/git/credentials", ".npmrc", ".pypirc", ".config/gcloud", ".azure",
    ".password-store", ".local/share/keyrings", ".cargo/credentials", ".cargo/credentials.toml",
    # issue 35: shell and REPL histories (typed passwords, tokens on command lines) ...
    ".bash_history", ".zsh_history", ".histfile", ".local/share/fish", ".python_history",
    ".psql_history", ".mysql_history", ".node_repl_history", ".sqlite_history", ".lesshst",
    # ... other agents' and tools' tokens ...
    ".codex", ".claude", ".claude.json", ".pgpass", ".vault-token", ".cache/huggingface/token",
    ".config/huggingface", ".config/rclone", ".s3cfg", ".boto", ".terraform.d", ".pulumi",
    ".config/op", ".config/hub", ".m2/settings.xml", ".gradle/gradle.properties", ".gem/credentials",
    ".config/pypoetry", ".composer/auth.json", ".config/composer", ".yarnrc.yml", ".bunfig.toml",
    ".config/github-copilot",
    # ... and browser profiles (cookies, saved passwords).
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".config/vivaldi", ".config/opera", "snap/firefox", "snap/chromium",
)
# What comes back, read-only, of the hidden home: the toolchains and package caches a build reads.
# Not their configuration files where those may hold a token: `.cargo/config.toml` (registry
# tokens), `.m2/settings.xml` (server passwords), `.gradle/gradle.properties`, `.npmrc`,
# `.condarc`, and not `.gitconfig` (url rewrites and `http.extraHeader` may carry a token; inside
# the sandbox `.git` is read-only anyway, so a commit is not made there). `sandboxAllowRead` adds
# more; the PATH entries, `VIRTUAL_ENV` and `CONDA_PREFIX` under the home come back too.
HOME_READABLE = (
    ".cargo/bin", ".cargo/registry", ".cargo/git", ".cargo/env", ".rustup",
    ".npm", ".nvm", ".volta", ".fnm", ".bun/bin", ".bun/install/cache", ".deno", ".yarn/berry/cache",
    ".cache/yarn", ".pnpm-store", ".local/share/pnpm", ".cache/node-gyp", ".node-gyp",
    ".pyenv", ".cache/pip", ".cache/uv", ".cache/pypoetry/cache", ".cache/pypoetry/artifacts",
    ".local/bin", ".local/lib", ".local/include", ".local/pipx", ".local/share/pipx", ".local/share/uv",
    ".local/share/virtualenvs", ".conda/pkgs", ".conda/envs", "miniconda3", "miniforge3", "anaconda3",
    "go", ".cache/go-build", ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".sdkman/candidates",
    ".jdks", ".rbenv", ".gem/ruby", ".local/share/gem", ".dotnet", ".nuget/packages", ".elan", ".ghcup",
    ".asdf", ".local/share/mise", ".nix-profile",
)
# Root-only files of the system: as root the command's uid outside is still 0, and the kernel
# checks file permissions with that uid (an owner's read survives `--cap-drop ALL`), so these are
# hidden rather than left to their mode bits.
SYSTEM_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh/ssh_host_*_key",
)


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def hidden_paths(extra: tuple[str, ...] = (), allowed: tuple[str, ...] = ()) -> list[str]:
    """Every existing path a command must not see, resolved (a symlink is hidden where it leads).

    A credential store under the home is also listed as spelled under the resolved home (where the
    home's read-only toolchains are bound back, a `.cargo/credentials.toml` inside one is hidden at
    that spelling). A built-in entry that `allowed` (`sandboxAllowRead`) names exactly is left
    visible (one inside it is not: `~/.ssh/known_hosts` does not open `~/.ssh`); `extra`
    (`sandboxHide`) always holds."""
    from ...state.paths import shiro_home  # noqa: PLC0415 - read at each call: tests move it
    from ...startup.warm_socket import runtime_dir  # noqa: PLC0415

    wanted: list[str] = [str(shiro_home()), str(runtime_dir(os.environ))]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        wanted.append(runtime)  # the session bus, ssh-agent, gpg-agent, the editor's IPC sockets
    config = os.environ.get("SHIRO_NEKO_CONFIG")
    if config:
        wanted.append(config)
    try:
        import platformdirs  # noqa: PLC0415

        wanted.append(str(platformdirs.user_config_path("shiro-neko")))
    except ImportError:  # pragma: no cover - a dependency; the home-relative default still applies
        wanted.append("~/.config/shiro-neko")
    real_home = os.path.realpath(os.path.expanduser("~"))
    opened = {_real(a) for a in allowed}
    found: list[str] = []  # already resolved (or kept as spelled on purpose)
    for lexical in [os.path.join(real_home, name) for name in HOME_SECRETS] + moved_secrets(os.environ):
        # One lstat for the usual missing entry; realpath (an lstat per component) only for the
        # few that exist: this runs before every command (bench/sandbox.py).
        if not os.path.lexists(lexical):
            continue
        real = os.path.realpath(lexical)
        if real in opened:
            continue  # the user's sandboxAllowRead names it exactly (a path inside it is not enough)
        found.append(real)
        if real != lexical:
            found.append(lexical)  # it leads elsewhere: hidden at both places
    for pattern in SYSTEM_SECRETS:
        wanted += glob.glob(pattern) if "*" in pattern else [pattern]
    wanted += list(extra)
    seen: dict[str, None] = {}
    for path in [*(_real(w) for w in wanted), *found]:
        if path != "/" and os.path.lexists(path):
            seen.setdefault(path, None)
    return list(seen)


# Where the environment moves a credential store out of the home (a secret kept there was
# readable in the sandbox: `XDG_CONFIG_HOME=/data/cfg` held the `gh` token). The XDG bases move every
# HOME_SECRETS entry under `.config/`, `.local/share/` or `.cache/`; these variables name one store each.
XDG_BASES = {"XDG_CONFIG_HOME": ".config/", "XDG_DATA_HOME": ".local/share/", "XDG_CACHE_HOME": ".cache/"}
SECRET_VARIABLES = (
    "GNUPGHOME", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "HISTFILE", "PGPASSFILE", "KUBECONFIG",
    "DOCKER_CONFIG", "GH_CONFIG_DIR", "CLOUDSDK_CONFIG", "AZURE_CONFIG_DIR", "NPM_CONFIG_USERCONFIG",
    "PASSWORD_STORE_DIR", "RCLONE_CONFIG", "HF_TOKEN_PATH", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "NETRC",
    "GIT_CONFIG_GLOBAL", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK", "VAULT_CONFIG_PATH",
)
# Stores inside a directory a variable names: the rest of that directory is a toolchain or a cache.
SECRET_INSIDE = {"CARGO_HOME": ("credentials", "credentials.toml"), "HF_HOME": ("token",)}


def moved_secrets(environ: Mapping[str, str]) -> list[str]:
    """The credential stores the environment puts elsewhere than the home, as spelled (absolute
    paths only; KUBECONFIG may list several)."""
    paths: list[str] = []
    for variable, prefix in XDG_BASES.items():
        base = environ.get(variable, "")
        if os.path.isabs(base):
            paths += [os.path.join(base, name[len(prefix):]) for name in HOME_SECRETS if name.startswith(prefix)]
    for variable in SECRET_VARIABLES:
        paths += [p for p in environ.get(variable, "").split(os.pathsep) if os.path.isabs(p)]
    for variable, names in SECRET_INSIDE.items():
        base = environ.get(variable, "")
        if os.path.isabs(base):
            paths += [os.path.join(base, name) for name in names]
    return paths


def hidden_homes(root: str) -> list[str]:
    """The home directories hidden whole (resolved): `$HOME`, the account's own home from the
    password database when it differs (as root, `/root` with `HOME` pointing elsewhere), and every
    other account's under /home. Not `/`,
    and not a home inside the workspace (the workspace is the home, or holds it: hiding the home
    would hide the workspace's own files; the credential list alone applies then)."""
    homes = [os.path.expanduser("~")]
    try:
        homes.append(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:  # pragma: no cover - an account without a passwd entry
        pass
    # Other accounts' homes too: as root the command's uid outside is 0 and reads them all, and a
    # user's 0755 home is open to everyone. The workspace may lie in one: it is bound back on top.
    homes += _other_homes()
    found: dict[str, None] = {}
    for home in homes:
        real = os.path.realpath(home) if home else ""
        if real and real != "/" and os.path.isdir(real) and not _within(real, root):
            found.setdefault(real, None)
    # One inside the other (a `HOME` under /root): the outer one's tmpfs first, or it would cover
    # the inner one's mounts.
    return sorted(found, key=len)


HOMES_DIR = "/home"


def _other_homes() -> list[str]:
    """The directories directly under /home (one scandir per command; links are not followed)."""
    try:
        with os.scandir(HOMES_DIR) as entries:
            return [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def readable_in_home(home: str, allowed: tuple[str, ...]) -> list[tuple[str, str]]:
    """(source, destination) pairs bound back read-only into the hidden `home`: the toolchains of
    `HOME_READABLE`, the PATH entries, the active virtualenv or conda prefix, and `sandboxAllowRead`,
    each where it exists. The destination keeps the home-relative spelling (a command finds
    `~/.cargo/bin` there even when it is a link); the source is where it leads."""
    spelled = [os.path.join(home, name) for name in HOME_READABLE]
    spelled += [p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    spelled += [v for v in (os.environ.get("VIRTUAL_ENV"), os.environ.get("CONDA_PREFIX")) if v and os.path.isabs(v)]
    spelled += [os.path.expanduser(a) for a in allowed]
    user_home = os.path.expanduser("~")
    pairs: dict[str, str] = {}
    for path in spelled:
        path = os.path.normpath(path)
        if _within(path, user_home) and not _within(path, home):
            path = os.path.join(home, os.path.relpath(path, user_home))  # `~` spelled through a link
        if path == home or not _within(path, home) or not os.path.exists(path):
            continue  # outside the home: readable already (unless hidden); or missing
        pairs.setdefault(path, os.path.realpath(path))
    # An entry inside another is bound with it already.
    return [(src, dst) for dst, src in pairs.items() if not any(o != dst and _within(dst, o) for o in pairs)]


def product_paths() -> list[str]:
    """The server's own install: its interpreter prefix (the virtualenv), the interpreter that
    virtualenv was made from (it may live under the home, e.g. `~/.pyenv`), and its package."""
    package = Path(__file__).resolve().parents[2]
    return list(dict.fromkeys([_real(sys.prefix), _real(sys.base_prefix), str(package)]))


@dataclass(frozen=True)
class Sandbox:
    """A sandbox in force: the mode, the bubblewrap binary, and what the settings add."""

    mode: Literal["workspace-write", "read-only"]
    bwrap: str
    hide: tuple[str, ...] = ()  # `sandboxHide`
    env_names: tuple[str, ...] = ()  # `sandboxEnv`
    allow_read: tuple[str, ...] = ()  # `sandboxAllowRead`

    def wrap(self, argv: list[str], root: str, cwd: str | None = None, widen: Widening | None = None) -> list[str]:
        """`argv` run inside the sandbox with `cwd` (default `root`, the workspace) as its working
        directory; `widen` is what one approved call gets on top (shell.py)."""
        root = os.path.realpath(root)
        chdir = os.path.realpath(cwd) if cwd else root
        return [self.bwrap, *_namespace_args(widen is not None and widen.network),
                *self.mount_args(root, widen), "--chdir", chdir, "--", *argv]

    def mount_args(self, root: str, widen: Widening | None = None) -> list[str]:
        # Later mounts win. In order: the base; the hidden homes (an empty private tmpfs each) with
        # what comes back of them read-only; hides that hold the workspace (it is bound back on
        # top); the workspace; the product's install; the workspace's git metadata read-only; then
        # every other hide. What comes back of a home goes before the workspace: a workspace may
        # lie inside a toolchain directory (`~/go/src/...`) and must stay writable.
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
        if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
            args += ["--tmpfs", "/var/run"]
        homes = hidden_homes(root)
        products = [p for p in product_paths() if os.path.exists(p)]
        opened = list(products)
        for home in homes:
            # Writable, private and thrown away: tools that write a cache under `~` still work.
            args += ["--tmpfs", home]
            back = readable_in_home(home, self.allow_read)
            back += [(p, p) for p in products if _within(p, home) and not _within(p, root)
                     and not any(_within(p, dest) for _, dest in back)]
            for source, dest in back:
                args += ["--ro-bind", source, dest]
            opened += [dest for _, dest in back]
        hides = hidden_paths(self.hide, self.allow_read)
        # Under a hidden home only what was bound back (or the workspace) can show a secret: a
        # secret inside it, or one holding it (`sandboxAllowRead: ["~/.ssh/id_rsa"]` opens nothing).
        hides = [p for p in hides if not any(_within(p, h) for h in homes)
                 or any(_within(p, o) or _within(o, p) for o in opened) or _within(p, root) or _within(root, p)]
        # A hide that holds the workspace stays writable (the workspace's mount point is made in
        # it); a hide inside another one that does not hold the workspace is hidden already.
        outer = [p for p in hides if _within(root, p)]
        hides = [p for p in hides if p not in outer and not any(q != p and _within(p, q) for q in hides if q not in outer)]
        for path in outer:
            args += ["--tmpfs", path]
        args += ["--bind" if self.mode == "workspace-write" else "--ro-bind", root, root]
        # One call's widening (approved by the user for that call): after the workspace, before
        # what must stay read-only or hidden whatever was approved (the product's install, git
        # metadata, the secrets), so a widened path holding one of those does not open it.
        writable = [root] if self.mode == "workspace-write" else []
        if widen is not None:
            for path in widen.read:
                args += ["--ro-bind", path, path]
            for path in widen.write:
                args += ["--bind", path, path]
            writable += list(widen.write)
            if widen.network:
                args += _resolver_args()
        for path in products:
            if any(_within(path, w) for w in writable):
                args += ["--ro-bind", path, path]
        if writable:
            args += git_mount_args(root)
        for path in hides:
            args += _hide(path)
        return args


def _hide(path: str) -> list[str]:
    if os.path.isdir(path):
        return ["--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", "/dev/null", path]


@dataclass(frozen=True)
class Widening:
    """What one approved run_command call gets beyond the sandbox: the network (the host's), and
    extra paths (resolved, existing) read-only or writable."""

    network: bool = False
    write: tuple[str, ...] = ()
    read: tuple[str, ...] = ()


def _resolver_args() -> list[str]:
    """With the network, name resolution too: /etc/resolv.conf often leads into /run (systemd-
    resolved's stub), which the sandbox replaces by an empty tmpfs; that one file comes back."""
    args: list[str] = []
    for name in ("/etc/resolv.conf", "/etc/hosts"):
        real = os.path.realpath(name)
        if real != name and os.path.isfile(real) and (_within(real, "/run") or _within(real, "/var/run")):
            args += ["--ro-bind", real, real]
    return args


def _namespace_args(network: bool = False) -> list[str]:
    args = [
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--cap-drop", "ALL", "--new-session", "--die-with-parent",
    ]
    if network:
        args.append("--share-net")  # after --unshare-all: the one namespace kept (bwrap(1))
    if os.geteuid() == 0:
        args += ["--uid", str(_NOBODY), "--gid", str(_NOBODY)]
    return args


# -- the environment ----------------------------------------------------------------------------

# What a command inherits: enough to find programs, its home, its locale and terminal, and the
# active virtualenv; everything else must be named in `sandboxEnv`.
ENV_ALLOWED = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ",
               "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "CONDA_DEFAULT_ENV")
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE|COOKIE|APIKEY|(^|_)KEY(_|$)|(^|_)AUTH(_|$)", re.IGNORECASE)
# Nobody can answer a pager or a credential prompt: tools print and fail instead of waiting.
_FIXED = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def command_env(extra: tuple[str, ...], sandboxed: bool, source: dict[str, str] | None = None) -> dict[str, str]:
    """A command's environment. Sandboxed: the allowlist, `LC_*`, and the names in `sandboxEnv`.
    With `sandbox: "off"` the command otherwise runs with the server's rights, so it keeps the
    environment except what is named like a credential (unless listed in `sandboxEnv`)."""
    env = dict(os.environ if source is None else source)
    listed = set(extra)
    if sandboxed:
        kept = {k: v for k, v in env.items() if k in ENV_ALLOWED or k.startswith("LC_") or k in listed}
    else:
        kept = {k: v for k, v in env.items() if k in listed or not _SECRET_NAME.search(k)}
    return {**kept, **_FIXED}


# -- whether it works here ----------------------------------------------------------------------

_PROBE_TIMEOUT_S = 10

# One probe per bwrap path, run in a thread of its own: it starts a process and waits for it (tens
# of ms on a quiet machine, up to _PROBE_TIMEOUT_S), which must not happen on the event loop's
# thread, where the first `shiro/status` asks for it. `probe_soon` starts it early (the server's
# import thread, server/cli.py; every service) so the answer is in by the time it is read.
_probes: dict[str, Future[str | None]] = {}
_probes_lock = threading.Lock()


def _forget_unfinished() -> None:
    """In a forked child (the warm server's, server/startup/warm.py) a probe's thread did not come along:
    a finished answer holds, an unfinished one is asked again."""
    global _probes_lock
    _probes_lock = threading.Lock()
    for path, future in list(_probes.items()):
        if not future.done():
            del _probes[path]


os.register_at_fork(after_in_child=_forget_unfinished)


def _probe(bwrap: str) -> str | None:
    """None when `bwrap` runs a command with the full set of flags here, else why not."""
    argv = Sandbox("read-only", bwrap).wrap(["true"], tempfile.gettempdir())
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({bwrap}) could not be run: {exc}"
    if done.returncode == 0:
        return None
    first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {done.returncode}"])[0]
    return f"bubblewrap ({bwrap}) fails here: {first}"


def _probe_of(bwrap: str) -> Future[str | None]:
    with _probes_lock:
        future = _probes.get(bwrap)
        if future is None:
            future = _probes[bwrap] = Future()

            def run() -> None:
                try:
                    future.set_result(_probe(bwrap))
                except BaseException as exc:  # noqa: BLE001 - the reader reports it
                    future.set_result(f"bubblewrap ({bwrap}) could not be probed: {exc}")

            threading.Thread(target=run, name="shiro-bwrap-probe", daemon=True).start()
        return future


def probe_soon() -> None:
    """Start probing the bubblewrap on PATH, if any, in its own thread (see `_probes`)."""
    path = shutil.which("bwrap")
    if path is not None:
        _probe_of(path)


def _find() -> tuple[str | None, str | None]:
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed or not on PATH"
    reason = _probe_of(path).result()  # at once once probe_soon's thread is done
    return (None, reason) if reason else (path, None)


def sandbox_for(mode: SandboxMode, hide: tuple[str, ...] = (), env: tuple[str, ...] = (),
                allow_read: tuple[str, ...] = ()) -> Sandbox | None:
    """The sandbox in force for this setting, or None (`off`, or no working bubblewrap here)."""
    if mode == "off":
        return None
    path, _ = _find()
    return Sandbox(mode, path, hide, env, allow_read) if path else None


def sandbox_status(mode: SandboxMode) -> SandboxStatus:
    """`shiro/status.sandbox`: the setting, and whether it is enforced (and why not)."""
    if mode == "off":
        return SandboxStatus(mode=mode, enforced=False)
    path, reason = _find()
    return SandboxStatus(mode=mode, enforced=path is not None, reason=reason)


# What a write or a connection the sandbox blocked looks like in a command's output.
_BLOCKED = re.compile(
    r"Read-only file system|Network is unreachable|Could not resolve host|"
    r"Temporary failure in name resolution|Name or service not known|"
    r"getaddrinfo|Connection refused|No address associated with hostname",
    re.IGNORECASE,
)


def blocked_note(sandbox: Sandbox, exit_code: int | None, output: str) -> str:
    """A line telling the model the sandbox probably stopped the command, or ""."""
    if exit_code == 0:
        return ""
    if output.startswith("bwrap:"):
        return f"\n[the {sandbox.mode} sandbox could not start the command; ask the user to run it with the sandbox off]"
    if not _BLOCKED.search(output):
        return ""
    allowed = "the workspace and a private /tmp" if sandbox.mode == "workspace-write" else "only a private /tmp"
    return (
        f"\n[sandbox {sandbox.mode}: this command may have been stopped by the sandbox (it can write to "
        f"{allowed} and has no network); if it needs more, run it again with network: true, "
        "write_paths or read_paths and a reason: the user is asked for that one call]"
    )
