"""Provider errors as the user reads them (issue 41 item 5): a connection error names the endpoint
it tried; an error whose text is the provider's raw event stream (`data: {...}`) shows only the
message in it. The SDK's own exception types, built as the SDK builds them (an httpx request and
response), go through the server's mapping (server/agent/provider/openai_provider.py)."""

from __future__ import annotations

import httpx2 as httpx
import openai

from shiro_neko.agent.provider.openai_provider import translate_error

URL = "http://127.0.0.1:9/v1/responses"


def test_a_connection_error_names_the_endpoint():
    exc = openai.APIConnectionError(request=httpx.Request("POST", URL))
    err = translate_error(exc)
    assert "http://127.0.0.1:9/v1/responses" in err.message and err.retryable


def test_raw_event_stream_text_becomes_its_message():
    raw = 'event: error\ndata: {"error": {"message": "the model is overloaded", "type": "server_error"}}\n\n'
    request = httpx.Request("POST", URL)
    exc = openai.InternalServerError("Error code: 500", response=httpx.Response(500, request=request, text=raw), body=raw)
    err = translate_error(exc)
    assert err.message == "500: the model is overloaded"
    assert "data:" not in err.message


def test_other_text_is_kept_as_it_is():
    request = httpx.Request("POST", URL)
    exc = openai.InternalServerError("Error code: 502", response=httpx.Response(502, request=request, text="bad gateway"), body="bad gateway")
    assert translate_error(exc).message == "502: bad gateway"
