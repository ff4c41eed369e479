"""clients/terminal/chat_ahead.py and JsonRpc.expect on real pipes: the chat goes only after the answer
to `initialize`, and every byte the thread read reaches the asyncio reader in order."""

from __future__ import annotations

import asyncio
import json
import os

from shiro_neko import protocol as wire
from shiro_neko.client.chat_ahead import CHAT_ID, ChatAhead
from shiro_neko.client.initialize import INITIALIZE_ID
from shiro_neko.client.jsonrpc import JsonRpc


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def frames(data: bytes) -> list[dict]:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b":")[1])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


def pipes() -> tuple[int, int, int, int]:
    to_client_r, to_client_w = os.pipe()
    to_server_r, to_server_w = os.pipe()
    return to_client_r, to_client_w, to_server_r, to_server_w


def test_the_chat_follows_the_answer_to_initialize_and_nothing_read_is_lost() -> None:
    to_client_r, to_client_w, to_server_r, to_server_w = pipes()
    log = frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 3, "message": "hello"}})
    answer = frame({"jsonrpc": "2.0", "id": INITIALIZE_ID, "result": {"capabilities": {}}})
    os.write(to_client_w, log + answer[:10])  # the answer arrives in two reads
    ahead = ChatAhead(to_client_r, to_server_w, "say hi")
    assert not ahead.join(0.2) and not ahead.chat_sent  # nothing is sent before the whole answer
    os.write(to_client_w, answer[10:])
    assert ahead.join(5) and ahead.chat_sent
    assert ahead.read == log + answer
    os.close(to_server_w)
    sent = frames(os.read(to_server_r, 65536))
    assert [m.get("method") for m in sent] == ["initialized", "workspace/executeCommand"]
    assert sent[1]["id"] == CHAT_ID and sent[1]["params"] == {"command": wire.CHAT, "arguments": [{"prompt": "say hi"}]}

    async def claim() -> tuple[object, object, list[str]]:
        reader = asyncio.StreamReader()
        reader.feed_data(ahead.read)
        notes: list[str] = []

        async def serve(method: str, params: object) -> None:
            return None

        rpc = JsonRpc(reader, None, lambda m, p: notes.append(m), serve, first_id=CHAT_ID)
        init, chat = rpc.expect(INITIALIZE_ID), rpc.expect(CHAT_ID)
        reader.feed_data(frame({"jsonrpc": "2.0", "id": CHAT_ID, "result": {"status": "completed"}}))
        reader.feed_eof()
        return await init, await chat, notes

    init, chat, notes = asyncio.run(claim())
    assert init == {"capabilities": {}} and chat == {"status": "completed"} and notes == ["window/logMessage"]


def test_a_refused_initialize_sends_nothing_more() -> None:
    to_client_r, to_client_w, to_server_r, to_server_w = pipes()
    os.write(to_client_w, frame({"jsonrpc": "2.0", "id": INITIALIZE_ID, "error": {"code": -32600, "message": "no"}}))
    ahead = ChatAhead(to_client_r, to_server_w, "say hi")
    assert ahead.join(5) and not ahead.chat_sent
    os.close(to_server_w)
    assert os.read(to_server_r, 65536) == b""


def test_a_server_that_ends_first_leaves_the_read_bytes_and_no_chat() -> None:
    to_client_r, to_client_w, to_server_r, to_server_w = pipes()
    os.write(to_client_w, b"Content-Length: 99\r\n\r\n{")
    os.close(to_client_w)
    ahead = ChatAhead(to_client_r, to_server_w, "say hi")
    assert ahead.join(5) and not ahead.chat_sent and ahead.read == b"Content-Length: 99\r\n\r\n{"
