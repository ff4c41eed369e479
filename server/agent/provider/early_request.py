"""A cold process's first model request, sent before the openai SDK is imported (issue 28).

Importing `openai` costs ~0.5 s, 90 % of it its pydantic type modules (`openai.types`;
docs/performance.md), and a cold `shiro -p` or freshly opened editor paid it before its first
request left. The body is ours already (msgspec bytes, openai_provider.py), so the first request
goes out over the HTTP client the SDK itself uses (httpx2, which `openai` depends on) and the SDK
is imported in a thread while the model thinks. What the SDK does stays the SDK's:

- the response is read by the SDK's own `AsyncStream` (SSE decoding, in-stream errors);
- an error status becomes the SDK's exception through the SDK's own `_make_status_error_from_response`,
  and a failed send is classified by the SDK's `timeout_exceptions()` / `request_exceptions()`,
  exactly as its `request()` does; then translate_error as for any other request;
- retries are ours, as before (the SDK's `max_retries` is 0): a retry goes through the SDK;
- the same httpx2 client is handed to the SDK afterwards, so the next request reuses the connection.

Auth is the one thing the SDK would otherwise build: this path is taken only when what the SDK
sends is the plain `Authorization: Bearer <key>` of an explicit key (see `eligible`), and
tests/unit/test_early_request.py compares the headers with the SDK's own for the same client, so
an SDK that starts sending something else fails that test. Any other configuration (organization,
project, custom headers, an SDK already imported) takes the SDK's path from the first request.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping

# The SDK's endpoint when neither a base URL setting nor OPENAI_BASE_URL names one;
# tests/unit/test_early_request.py checks it against the SDK's own default.
SDK_DEFAULT_BASE_URL = "https://api.openai.com/v1"

# Environment variables with which the SDK may send more than `Authorization: Bearer <key>` for
# an explicit key (its client reads them in __init__, openai/lib/_client_auth.py): then the first
# request waits for the SDK. (The admin key is not sent on these requests today; listed to be safe.)
SDK_HEADER_VARIABLES = ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_CUSTOM_HEADERS", "OPENAI_ADMIN_KEY")


def eligible(environ: Mapping[str, str] | None = None) -> bool:
    """May the next request leave before the SDK is imported? Not once the SDK is (or is being)
    imported: its own path costs nothing more then."""
    env = os.environ if environ is None else environ
    return ("openai" not in sys.modules and not any(env.get(name) for name in SDK_HEADER_VARIABLES)
            and _has_httpx2())


_httpx2_found: bool | None = None


def _has_httpx2() -> bool:
    """The SDK's HTTP client is httpx2 from openai 3 on; an older SDK (httpx) takes its own path."""
    global _httpx2_found
    if _httpx2_found is None:
        from importlib.util import find_spec

        _httpx2_found = find_spec("httpx2") is not None
    return _httpx2_found


def url_for(base_url: str | None, path: str) -> str:
    """The SDK's URL for `path` under `base_url` (it joins them with exactly one slash)."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or SDK_DEFAULT_BASE_URL).rstrip("/") + "/" + path.lstrip("/")


def headers_for(key: str) -> dict[str, str]:
    """What the SDK sends that the endpoint acts on: the key as a bearer token and JSON both ways.
    (Its User-Agent and X-Stainless-* headers describe the client; this request has httpx2's.)"""
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}


def http_client(verify: Any) -> Any:
    """An httpx2 client as the SDK's default one is configured where it matters (redirects
    followed; timeouts are per request); the SDK is given this same client afterwards."""
    import httpx2

    return httpx2.AsyncClient(verify=verify, follow_redirects=True)


async def send(http: Any, url: str, key: str, content: bytes, read_timeout: float, connect_timeout: float) -> Any:
    """POST `content` and return the response with its headers read and its body not (stream=True)."""
    import httpx2

    request = http.build_request("POST", url, content=content, headers=headers_for(key),
                                 timeout=httpx2.Timeout(read_timeout, connect=connect_timeout))
    try:
        return await http.send(request, stream=True)
    except Exception as exc:
        exc.shiro_request = request  # type: ignore[attr-defined]  # for sdk_error: the SDK's errors carry it
        raise


def sdk_error(exc: Exception) -> Exception:
    """A failed send as the SDK's `request()` would have raised it (the SDK is imported by now)."""
    from openai import APIConnectionError, APITimeoutError, OpenAIError
    from openai._httpx2 import request_exceptions, timeout_exceptions

    request = getattr(exc, "shiro_request", None)
    if isinstance(exc, OpenAIError) or request is None:
        return exc
    if isinstance(exc, timeout_exceptions()):
        return APITimeoutError(request=request)
    if isinstance(exc, request_exceptions()):
        return APIConnectionError(request=request)
    return exc


async def raise_for_status(client: Any, response: Any) -> None:
    """The SDK's check of a response (httpx2's raise_for_status, the statuses of its
    `status_exceptions()`), raising the SDK's exception, with the body read for the provider's
    message, as its `request()` does (the SDK is imported by now)."""
    from openai._httpx2 import status_exceptions

    try:
        response.raise_for_status()
    except status_exceptions():
        if not response.is_closed:
            await response.aread()
        raise client._make_status_error_from_response(response) from None
