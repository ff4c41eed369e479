"""`shiro -p` on a warm server: the turn starts while the client is still importing.

The client writes `initialize` into the warm child's pipe first thing (clients/terminal/initialize.py).
This thread then waits for its answer and, the moment it is there, sends `initialized` and the
`shiro.chat` of the prompt, so the server builds and sends the first provider request while the
main thread imports asyncio, msgspec and the wire layer. LSP's order holds: nothing follows
`initialize` before its answer. Whatever the thread read (that answer, and anything the server
sent before it) is handed to the asyncio reader afterwards, so the connection sees every byte in
order; `Connection.chat` then waits for the answer to the request already sent.

Only for a plain `shiro -p` (no -c/-r, whose resume must come before the prompt).
"""

from __future__ import annotations

import json
import os
import threading

from ..model.lsp_framing import next_frame
from .initialize import INITIALIZE_ID, frame, send_early

CHAT_ID = INITIALIZE_ID + 1


def _initialize_answer(data: bytes) -> dict[str, object] | None:
    """The answer to `initialize` among the whole frames at the start of `data`, if there yet.
    Raises server/model/lsp_framing.py's MalformedFrame (a ValueError) on a broken frame."""
    at = 0
    while True:
        found = next_frame(data, at)
        if found is None:
            return None
        body, at = found
        try:
            message = json.loads(body)
        except ValueError:  # well framed, so the next frame is still found (as clients/terminal/jsonrpc.py does)
            continue
        if isinstance(message, dict) and message.get("id") == INITIALIZE_ID and "method" not in message:
            return message


class ChatAhead:
    def __init__(self, stdout_r: int, stdin_w: int, prompt: str, images: list[dict[str, object]] | None = None) -> None:
        self._stdout_r, self._stdin_w, self._prompt, self._images = stdout_r, stdin_w, prompt, images
        self.read = b""  # every byte taken from the server's stdout, for the asyncio reader
        self.chat_sent = False  # `initialized` and the chat went (else the connection sends them)
        self._thread = threading.Thread(target=self._run, name="shiro-chat-ahead", daemon=True)
        self._thread.start()

    def chat_args(self) -> dict[str, object]:
        # As Connection.chat builds them (clients/terminal/connection.py), which compares the two.
        return {"prompt": self._prompt, "images": self._images} if self._images else {"prompt": self._prompt}

    def _run(self) -> None:
        data = b""
        try:
            # The command's name, from protocol.py as everywhere: main() imports it right after
            # starting this thread, ahead of the rest, so this waits at most for that import.
            from .. import protocol as wire

            while True:
                answer = _initialize_answer(data)
                if answer is not None:
                    break
                more = os.read(self._stdout_r, 65536)
                if not more:
                    return  # the server ended: the connection reports it
                data += more
            if "error" in answer:
                return  # the connection reports the refusal; nothing else may follow
            chat = {"command": wire.CHAT, "arguments": [self.chat_args()]}
            frames = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}) + frame(
                {"jsonrpc": "2.0", "id": CHAT_ID, "method": "workspace/executeCommand", "params": chat})
            self.chat_sent = send_early(self._stdin_w, frames)
        except (OSError, ValueError):
            pass  # a broken pipe or frame: the connection finds the same and reports it
        finally:
            self.read = data

    def join(self, timeout: float) -> bool:
        """Wait for the thread; False if it is still waiting for the server after `timeout`."""
        self._thread.join(timeout)
        return not self._thread.is_alive()
