"""Model, endpoint and key where the user is: `shiro.models`, `shiro.setModel`, `shiro.setCredentials`.

The key a client hands over (VS Code's SecretStorage, the terminal's keyring) lives in this object
only: never in the settings (which sessions' records and logs may show), never in `os.environ`
(every command and MCP server the agent starts would inherit it), never on disk. The providers
get it through their EndpointConfig (agent/provider/openai_provider.py), which puts it in the
Authorization header of each request and blanks it out of error texts.
"""

from __future__ import annotations

import logging
from typing import Any, Callable
from urllib.parse import urlsplit

import msgspec

from ..agent import model_list
from ..agent.provider.early_request import SDK_DEFAULT_BASE_URL
from ..config import EFFORTS, Effort, Settings
from ..errors import InvalidArguments
from ..model.session_state import SessionState
from ..protocol import ModelInfo, ModelsResult, SET_UP_MODEL, SetCredentialsArgs, SetCredentialsResult

log = logging.getLogger(__name__)

MAX_KEY = 8192  # characters: longer than any provider's key (JWTs included)
MAX_MODEL = model_list.MAX_ID
MAX_URL = 2048


def checked_model(model: str) -> str:
    """A model id as given, stripped; refused when it cannot be one (empty, a control character, long)."""
    model = model.strip()
    if not model or len(model) > MAX_MODEL or not model.isprintable():
        raise InvalidArguments(f"{model[:40]!r} is not a model id: give a name such as gpt-5 or qwen2.5-coder")
    return model


def known_effort(effort: str) -> Effort | None:
    """The effort level `effort` names (case and spaces aside), None when it names none."""
    return next((e for e in EFFORTS if e == effort.strip().lower()), None)


def _checked_key(key: str) -> str:
    key = key.strip()
    # A space or control character inside would end up in a header line (or be a paste gone wrong).
    if len(key) > MAX_KEY or any(c.isspace() or not c.isprintable() for c in key):
        raise InvalidArguments("the API key holds spaces or control characters: paste the key alone")
    return key


def _checked_url(url: str) -> str:
    url = url.strip()
    parts = urlsplit(url)
    if len(url) > MAX_URL or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArguments(
            f"{url[:80]!r} is not an endpoint URL: give http(s)://host[:port]/v1, e.g. http://127.0.0.1:11434/v1")
    return url


class ModelFeature:
    def __init__(self, settings: Callable[[], Settings], apply_settings: Callable[[dict[str, Any]], None]) -> None:
        self._settings = settings
        self._apply_settings = apply_settings
        # Handed to every provider by ShiroService.provider_for, before each request.
        self.api_key: str | None = None  # handed over with shiro.setCredentials; memory only
        # shiro.setModel per session, over the `model` setting.
        self.models: dict[str, str] = {}
        # A resumed session's dropped choice, told at the start of its next turn (before_turn): a
        # notice sent with the resume itself would land before the client shows that session.
        self.notices: dict[str, str] = {}

    def set_credentials(self, args: SetCredentialsArgs) -> SetCredentialsResult:
        """An endpoint and key for the rest of this process: the key kept here, the URL and model
        applied like a settings change (a client that has them in its settings sends them too)."""
        changes: dict[str, Any] = {}
        if args.baseUrl is not None:
            changes["baseUrl"] = _checked_url(args.baseUrl) if args.baseUrl.strip() else None
        if args.model is not None:
            changes["model"] = checked_model(args.model) if args.model.strip() else None
        key = _checked_key(args.apiKey) if args.apiKey is not None else None
        if changes:
            self._apply_settings(changes)
        if args.apiKey is not None:
            self.api_key = key or None
        model_list.forget()  # a list the old key was refused may now be given
        settings = self._settings()
        return SetCredentialsResult(ok=True, model=settings.effective_model, baseUrl=settings.effective_base_url)

    async def list(self, settings: Settings, refresh: bool) -> ModelsResult:
        """The endpoint's models (when it lists them), then those the settings name."""
        import os

        key = self.api_key or os.environ.get("OPENAI_API_KEY") or None
        base_url = settings.effective_base_url
        error: str | None = None
        listed: tuple[str, ...] = ()
        if base_url is None and key is None:
            error = f'no endpoint or key is set up ("{SET_UP_MODEL}")'
        else:
            listing = await model_list.endpoint_models(base_url or SDK_DEFAULT_BASE_URL, key, refresh)
            listed, error = listing.models, listing.error
        models = [ModelInfo(id=m, source="endpoint") for m in listed]
        named = [settings.model, *settings.models, settings.effective_model]
        for model in dict.fromkeys(m for m in named if m):
            if model not in listed:
                models.append(ModelInfo(id=model, source="settings"))
        return ModelsResult(models=models, current=settings.effective_model, error=error)

    def restore(self, state: SessionState) -> Effort | None:
        """A resumed session's own model (kept here) and effort (returned), as its user picked
        them. The record is disk input: each is checked as shiro.setModel checks it, and one that
        it would refuse (a hand-edited record) is dropped, said in a notice, and the session
        follows the settings there instead."""
        dropped: list[str] = []
        if isinstance(state.model_override, str):
            try:
                self.models[state.id] = state.model_override = checked_model(state.model_override)
            except InvalidArguments:
                dropped.append(f"model {state.model_override[:40]!r} (not a model id)")
                state.model_override = msgspec.UNSET
        effort = None
        if isinstance(state.effort_override, str):
            effort = known_effort(state.effort_override)
            if effort is None:
                dropped.append(f"effort {state.effort_override[:40]!r} (not one of {', '.join(EFFORTS)})")
                state.effort_override = msgspec.UNSET
            else:
                state.effort_override = effort
        if dropped:
            notice = (f"dropped this session's saved {' and '.join(dropped)}: it follows the settings "
                      "(`model`, `reasoningEffort`) instead; /model or /effort picks one again")
            log.warning("session %s: %s", state.id, notice)
            self.notices[state.id] = notice
        return effort

    def forget(self, session_id: str) -> None:
        self.models.pop(session_id, None)
        self.notices.pop(session_id, None)
