"""The models an endpoint lists (`GET <baseUrl>/models`), for `shiro.models` and the clients' pickers.

Asked with a short timeout in the background of the command (the HTTP client's import and TLS
context in a thread, as agent/context_window.py does), cached per endpoint for a few minutes,
bounded in entries, in bytes read and in ids kept. An endpoint that does not list (a proxy without
the route, a refused key) gives an error line instead, never a failed command.

A shared leaf (tests/unit/test_architecture.py SHARED_LEAVES): the terminal's first run lists the
endpoint's models with it before any server runs (clients/terminal/first_run.py), so it imports
the standard library and the HTTP client only.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

log = logging.getLogger(__name__)

TIMEOUT = 3.0  # seconds for the endpoint's answer
CACHE_SECONDS = 300.0
MAX_BYTES = 4 * 1024 * 1024
MAX_MODELS = 500
MAX_ID = 200  # characters of one id: longer is not a model name
_MAX_CACHED = 16


@dataclass(frozen=True)
class Listing:
    models: tuple[str, ...]
    error: str | None = None


_cache: OrderedDict[str, tuple[float, Listing]] = OrderedDict()


def forget() -> None:
    """Drop every cached list (the key or endpoint changed: a refused list may now be allowed)."""
    _cache.clear()


def parse(body: object) -> tuple[str, ...]:
    """The ids of an OpenAI-style `{"data": [{"id": ...}]}` (Ollama, LiteLLM, vLLM answer the same),
    sorted, unique, each printable and short; anything else is ignored."""
    data = body.get("data") if isinstance(body, dict) else None
    ids: set[str] = set()
    for entry in data if isinstance(data, list) else []:
        model = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(model, str) and 0 < len(model) <= MAX_ID and model.isprintable() and not model.isspace():
            ids.add(model)
    return tuple(sorted(ids)[:MAX_MODELS])


async def _ask(url: str, key: str | None) -> Listing:
    httpx = await asyncio.to_thread(importlib.import_module, "httpx2")
    http = await asyncio.to_thread(lambda: httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False))
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with http as client:
        try:
            async with client.stream("GET", url, headers=headers) as response:
                if response.status_code in (401, 403):
                    return Listing((), f"the endpoint refused the key ({response.status_code})")
                if response.status_code != 200:
                    return Listing((), f"the endpoint does not list its models ({response.status_code})")
                raw = bytearray()
                async for chunk in response.aiter_bytes():
                    raw += chunk
                    if len(raw) > MAX_BYTES:
                        return Listing((), "the endpoint's model list is too large")
        except httpx.HTTPError as exc:
            # The exception's text names the URL at most, never a header (the key).
            return Listing((), f"could not reach the endpoint: {type(exc).__name__}")
    import json

    try:
        body = json.loads(raw)
    except ValueError:
        return Listing((), "the endpoint's model list is not JSON")
    return Listing(parse(body))


async def endpoint_models(base_url: str, key: str | None, refresh: bool = False) -> Listing:
    """The models `base_url` lists, from the cache when asked in the last CACHE_SECONDS."""
    url = base_url.rstrip("/") + "/models"
    hit = _cache.get(url)
    if hit is not None and not refresh and time.monotonic() - hit[0] < CACHE_SECONDS:
        return hit[1]
    try:
        listing = await _ask(url, key)
    except Exception as exc:  # noqa: BLE001 - a list that fails is an error line, never a failed command
        log.debug("model list of %s failed: %s", base_url, type(exc).__name__)
        listing = Listing((), f"could not list the endpoint's models: {type(exc).__name__}")
    _cache[url] = (time.monotonic(), listing)
    _cache.move_to_end(url)
    while len(_cache) > _MAX_CACHED:
        _cache.popitem(last=False)
    return listing
