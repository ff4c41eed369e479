"""The terminal's "Set up model" (docs/terminal.md "First run", docs/models.md): with no key and no
endpoint anywhere, an interactive `shiro` on a terminal asks for the endpoint and the API key
before it starts, and `shiro setup` asks again whenever the user wants. The key goes to the OS
keyring where keyring has a backend, else to a 0600 file (server/user_credentials.py names both);
later runs read it back and hand it to their server with `shiro.setCredentials`, never through
the environment (every command the agent runs would inherit it).

`shiro -p` never asks (a script has no one to answer): without a key or endpoint it keeps its
clear error and exit status 1.
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import Any, TextIO
from urllib.parse import urlsplit

from ..user_credentials import Credentials, credentials_path, load, save

TRIES = 3  # an endpoint that is not a URL is asked again this many times, then the set-up stops


def stored(options: dict[str, Any]) -> Credentials | None:
    """The kept endpoint and key, unless the environment or a flag/setting gives them already
    (OPENAI_API_KEY set: the file is not even read, so keyring is never imported)."""
    if os.environ.get("OPENAI_API_KEY"):
        return None
    found = load()
    if found is None or not (found.api_key or found.base_url):
        return None
    if options.get("baseUrl") and not found.api_key:
        return None  # a --base-url or settings endpoint wins over the kept one
    return found


def apply(options: dict[str, Any], found: Credentials | None) -> dict[str, Any]:
    """The settings with the kept endpoint under a flag's or the settings file's."""
    if found is not None and found.base_url and not options.get("baseUrl"):
        return {**options, "baseUrl": found.base_url}
    return options


def _endpoint_problem(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.hostname:
        return None
    return "not an http(s) URL: give one such as http://127.0.0.1:11434/v1, or leave it empty for OpenAI"


FIRST_RUN = "shiro-neko needs a model endpoint. Set up model (Enter skips; `shiro setup` asks again later):"


def ask(out: TextIO = sys.stdout, intro: str = FIRST_RUN) -> Credentials | None:
    """Asks on the terminal; None when the user gave nothing (or left with Ctrl-D/Ctrl-C)."""
    print(intro, file=out)
    try:
        url = ""
        for _ in range(TRIES):
            url = input("  endpoint (empty: OpenAI; e.g. http://127.0.0.1:11434/v1 for Ollama): ").strip()
            problem = _endpoint_problem(url) if url else None
            if problem is None:
                break
            print(f"  ! {problem}", file=out)
        else:
            return None
        key = getpass.getpass("  API key (hidden; empty for an endpoint that needs none): ").strip()
    except (EOFError, KeyboardInterrupt):
        print(file=out)
        return None
    if any(c.isspace() for c in key):
        print("  ! the key holds spaces: paste the key alone (nothing was kept)", file=out)
        return None
    if not url and not key:
        return None
    kept = save(url or None, key or None)
    path = str(credentials_path())
    if key and kept.where == path:
        said = f"kept in {path} (yours alone, 0600): the endpoint and the key"
    elif key:
        said = f"kept: the key in {kept.where}, the endpoint in {path}"
    else:
        said = f"kept: the endpoint in {path}"
    print(f"  {said}", file=out, flush=True)
    return kept


def run_setup() -> int:
    """`shiro setup`: the same questions, on a terminal only."""
    if not sys.stdin.isatty():
        print("shiro setup: asks on a terminal; run it in one (or set OPENAI_API_KEY / --base-url)", file=sys.stderr)
        return 2
    return 0 if ask(intro="Set up model: the endpoint and the API key (Enter at both changes nothing):") is not None else 1
