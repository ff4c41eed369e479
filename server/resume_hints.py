"""The shutdown line's "Resume it with:" part, in each client's own words (issue 26: an editor's
log told its users to run `shiro -c`). The server picks one by the client: the terminal client,
an editor named in LSP `clientInfo`, or ACP."""

from __future__ import annotations

from typing import Callable

from .protocol import RESUME

ResumeLines = Callable[[str], list[str]]  # a session id prefix -> the lines


def terminal(hint: str) -> list[str]:
    return [
        "shiro -c                    newest session in this directory",
        f"shiro -r {hint:<18} this session by id",
    ]


def vscode(hint: str) -> list[str]:
    return [f'"Shiro Neko: Resume Latest Session", or "Shiro Neko: Sessions…" and pick {hint}']


def neovim(hint: str) -> list[str]:
    return [f":ShiroResume               newest session, or :ShiroResume {hint}"]


def emacs(hint: str) -> list[str]:
    return [f"M-x shiro-resume            newest session, or C-u M-x shiro-resume {hint}"]


def acp(hint: str) -> list[str]:
    return [f"your editor's session list (session/load), session {hint}"]


def any_lsp_client(hint: str) -> list[str]:
    return [f'workspace/executeCommand {RESUME} {{"latest": true}}, or {{"id": "{hint}"}}']


def for_lsp_client(name: str | None) -> ResumeLines:
    """By `clientInfo.name`: our clients, and the editors whose plugins we ship."""
    lowered = (name or "").lower()
    if lowered == "shiro":
        return terminal
    if lowered == "neovim" or lowered == "nvim":
        return neovim
    if lowered.startswith("eglot") or "emacs" in lowered:
        return emacs
    if "code" in lowered:  # Visual Studio Code, code-server, VSCodium, Code - OSS
        return vscode
    return any_lsp_client
