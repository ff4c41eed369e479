"""The terminal's "Set up model" (docs/terminal.md "First run", docs/models.md): with no key and no
endpoint anywhere, an interactive `shiro` on a terminal asks for the endpoint and the API key
before it starts, and `shiro setup` asks again whenever the user wants. The key goes to the OS
keyring where keyring has a backend, else to a 0600 file (server/user_credentials.py names both);
later runs read it back and hand it to their server with `shiro.setCredentials`, never through
the environment (every command the agent runs would inherit it).

With an endpoint given (not OpenAI's), a third question picks the model: the endpoint's
`GET <base>/models` (server/agent/model_list.py: a short timeout, a size cap, ids checked; the
endpoint is untrusted) numbered, the answer kept as `model` in the user settings file (every other
key kept). Else an Ollama or vLLM user would send the default model, which such an endpoint lacks.
A list that fails skips the question with one line saying why.

`shiro -p` never asks (a script has no one to answer): without a key or endpoint it keeps its
clear error and exit status 1.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import urlsplit

from ..user_credentials import Credentials, credentials_path, load, save

TRIES = 3  # an endpoint that is not a URL (or a model answer that names none) is asked again this many times
SHOWN_MODELS = 40  # numbered on the terminal; the rest may still be typed by name
# The server's default (server/config.py effective_model), named in "Enter keeps …" only.
DEFAULT_MODEL = "gpt-5"


@dataclass(frozen=True)
class SetUp:
    credentials: Credentials
    model: str | None  # picked at the model question (and kept in the settings file), else None


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


def _listed(url: str, key: str | None) -> tuple[tuple[str, ...], str | None]:
    """The endpoint's models, or () and why not."""
    import asyncio

    from ..agent.model_list import endpoint_models

    listing = asyncio.run(endpoint_models(url, key))
    return listing.models, listing.error


def _current_model() -> str:
    from ..user_settings import load_user_settings

    model = load_user_settings().settings.get("model")
    return model if isinstance(model, str) and model else os.environ.get("SHIRO_MODEL") or DEFAULT_MODEL


def _pick(answer: str, models: tuple[str, ...]) -> str | None:
    """The model an answer names: a number of the list, else a name (listed or not: an endpoint
    may serve more than it lists); None when it names none."""
    if answer.isdigit():
        n = int(answer)
        return models[n - 1] if 1 <= n <= min(len(models), SHOWN_MODELS) else None
    if len(answer) <= 200 and answer.isprintable() and not any(c.isspace() for c in answer):
        return answer
    return None


def ask_model(url: str, key: str | None, out: TextIO = sys.stdout) -> str | None:
    """The model question (the module docstring): the picked id, kept in the settings file, or None
    (Enter, no list, Ctrl-D/Ctrl-C, a settings file that cannot take it)."""
    from ..user_settings import SettingsFileError, save_user_setting

    models, error = _listed(url, key)
    if not models:
        print(f"  ! no model list from the endpoint ({error or 'it lists none'}); `/model NAME` picks one later", file=out)
        return None
    current = _current_model()
    for n, model in enumerate(models[:SHOWN_MODELS], 1):
        print(f"  {n:>3}{'*' if model == current else ' '} {model}", file=out)
    if len(models) > SHOWN_MODELS:
        print(f"       … {len(models) - SHOWN_MODELS} more: type a name", file=out)
    lacks = "" if current in models else " (the endpoint does not list it)"
    picked: str | None = None
    try:
        for _ in range(TRIES):
            answer = input(f"  model (number or name; Enter keeps {current}{lacks}): ").strip()
            if not answer:
                return None
            picked = _pick(answer, models)
            if picked is not None:
                break
            print(f"  ! not a number from 1 to {min(len(models), SHOWN_MODELS)} nor a model name", file=out)
        else:
            return None
    except (EOFError, KeyboardInterrupt):
        print(file=out)
        return None
    try:
        path = save_user_setting("model", picked)
    except (SettingsFileError, OSError) as exc:
        print(f"  ! model {picked} is used for this run only: {exc}", file=out)
        return picked
    print(f"  model {picked}: kept in {path}", file=out, flush=True)
    return picked


def ask(out: TextIO = sys.stdout, intro: str = FIRST_RUN) -> SetUp | None:
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
    return SetUp(kept, ask_model(url, key or None, out) if url else None)


def run_setup() -> int:
    """`shiro setup`: the same questions (the model's too), on a terminal only."""
    if not sys.stdin.isatty():
        print("shiro setup: asks on a terminal; run it in one (or set OPENAI_API_KEY / --base-url)", file=sys.stderr)
        return 2
    return 0 if ask(intro="Set up model: the endpoint and the API key (Enter at both changes nothing):") is not None else 1
