"""The model's context window: asked of the endpoint where it says, else a table of known models,
else the `contextWindow` setting (docs/context.md).

Local engines serve a window set at load time: Ollama's `/api/show` (`num_ctx` in the model's
parameters, else Ollama's default of 4,096 tokens, else the model's own `context_length`),
llama.cpp's `/props` (`n_ctx`), LM Studio's `/api/v0/models` (`loaded_context_length`). The
question goes out once per endpoint and model, in the background with a short timeout: the turn
never waits for it, and an endpoint that does not answer (a hosted API) is remembered as silent.
The compaction threshold is capped below the window (`capped_threshold`).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import re
from collections import OrderedDict
from typing import Any, Callable

log = logging.getLogger(__name__)

TIMEOUT = 1.5  # seconds for each of the endpoint's answers
OLLAMA_DEFAULT = 4096  # what Ollama loads a model with when nothing sets num_ctx (below 24 GiB of VRAM)
_MAX_CACHED = 64

# Known models by id pattern, first match wins: the window the model is served with by its vendor.
KNOWN: tuple[tuple[re.Pattern[str], int], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), tokens) for pattern, tokens in (
        (r"gpt-5", 400_000),
        (r"gpt-4\.1", 1_047_576),
        (r"gpt-4o", 128_000),
        (r"(^|[/:])o[34](-|$)", 200_000),
        (r"claude", 200_000),
        (r"gemini", 1_048_576),
        (r"qwen3-coder", 262_144),
        (r"qwen2\.5-coder|qwen2\.5|qwen3", 32_768),
        (r"llama-?3\.[123]", 131_072),
        (r"deepseek", 128_000),
        (r"mistral|codestral|devstral", 131_072),
        (r"gpt-oss", 131_072),
    )
)


def known_window(model: str) -> int | None:
    for pattern, tokens in KNOWN:
        if pattern.search(model):
            return tokens
    return None


_probed: OrderedDict[tuple[str, str], int | None] = OrderedDict()
_running: dict[tuple[str, str], "asyncio.Task[None]"] = {}


def _root(base_url: str) -> str:
    """The server root of an OpenAI-compatible base URL (`http://host:11434/v1` -> `http://host:11434`)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def from_ollama(show: Any) -> int | None:
    """The window Ollama serves the model with, from `/api/show`'s answer."""
    if not isinstance(show, dict):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        found = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters, re.MULTILINE)
        if found:
            return int(found.group(1))
    info = show.get("model_info")
    if isinstance(info, dict):
        lengths = [_positive(v) for k, v in info.items() if isinstance(k, str) and k.endswith(".context_length")]
        trained = next((n for n in lengths if n), None)
        if trained is not None:
            return min(trained, OLLAMA_DEFAULT)
    return None


def from_llama_cpp(props: Any) -> int | None:
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return int(settings["n_ctx"])
    return _positive(props.get("n_ctx"))


def from_lm_studio(models: Any, model: str) -> int | None:
    data = models.get("data") if isinstance(models, dict) else None
    for entry in data if isinstance(data, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            return _positive(entry.get("loaded_context_length")) or _positive(entry.get("max_context_length"))
    return None


async def ask_endpoint(base_url: str, model: str) -> int | None:
    """The window the endpoint reports for `model`, or None (no such API, no answer in time)."""
    # The openai SDK's HTTP client. Its import and a client's TLS context (the CA bundle read) take
    # a noticeable time: in a thread, off the event loop (as agent/provider/openai_provider.py does).
    httpx = await asyncio.to_thread(importlib.import_module, "httpx2")
    root = _root(base_url)
    http = await asyncio.to_thread(lambda: httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False))
    async with http as client:
        asks: tuple[tuple[str, Callable[[], Any], Callable[[Any], int | None]], ...] = (
            ("ollama", lambda: client.post(f"{root}/api/show", json={"model": model}), from_ollama),
            ("llama.cpp", lambda: client.get(f"{root}/props"), from_llama_cpp),
            ("lm studio", lambda: client.get(f"{root}/api/v0/models"), lambda body: from_lm_studio(body, model)),
        )
        for name, send, read in asks:
            try:
                response = await send()
                if response.status_code != 200 or len(response.content) > 4 * 1024 * 1024:
                    continue
                window = read(response.json())
            except (httpx.HTTPError, ValueError) as exc:
                log.debug("context window: %s API of %s did not answer: %s", name, root, exc)
                if isinstance(exc, (httpx.ConnectError, httpx.TimeoutException)):
                    return None  # nothing listens there: the other APIs would not answer either
                continue
            if window is not None:
                return window
    return None


def cached(base_url: str | None, model: str) -> tuple[bool, int | None]:
    """(asked already, the endpoint's answer)."""
    key = (base_url or "", model)
    return (key in _probed, _probed.get(key))


def probe_soon(base_url: str | None, model: str, landed: Callable[[], None]) -> "asyncio.Task[None] | None":
    """Ask the endpoint in the background, once per endpoint and model; `landed` runs when an
    answer (a window) arrived. Without a base URL (OpenAI itself) nothing is asked. The task of
    the question still under way, or None."""
    key = (base_url or "", model)
    if not base_url or key in _probed:
        return None
    if key in _running:
        return _running[key]

    async def run() -> None:
        try:
            window = await ask_endpoint(base_url, model)
        except Exception as exc:  # noqa: BLE001 - a probe never fails a turn
            log.debug("context window probe of %s failed: %s", base_url, exc)
            window = None
        _probed[key] = window
        while len(_probed) > _MAX_CACHED:
            _probed.popitem(last=False)
        _running.pop(key, None)
        if window is not None:
            landed()

    task = _running[key] = asyncio.get_running_loop().create_task(run())
    return task


def window_for(base_url: str | None, model: str, setting: int | None) -> int | None:
    """The endpoint's answer, else the table, else the setting."""
    return cached(base_url, model)[1] or known_window(model) or setting


def capped_threshold(threshold: int, window: int | None, prefix_tokens: int) -> int:
    """The compaction threshold, at most what the window leaves for the conversation: the window
    less the instructions and tools (`prefix_tokens`) and a quarter of the window (at most 16k
    tokens) kept for the model's answer."""
    if window is None:
        return threshold
    room = window - prefix_tokens - min(16_384, window // 4)
    return max(1, min(threshold, room))
