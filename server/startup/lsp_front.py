"""The LSP server's front: answers `initialize` before pygls and lsprotocol are imported.

Why: `import pygls.server, lsprotocol.types` is ~0.4 s on a quiet machine (lsprotocol.types,
~1,000 attrs classes in one module, is most of it: docs/performance.md, "Cold start"), and an
editor waits for the `initialize` answer before it shows anything. The answer itself needs none of
it: our capabilities are fixed (the registered features and commands), and only the position
encoding depends on the client. So `shiro-lsp` over stdio (server/cli.py) imports the LSP layer in
a thread while this front, stdlib only, reads the first frame, answers it if it is a plainly
shaped `initialize`, and then hands the stream to the pygls server:

- the buffered `initialize` frame is replayed to pygls first (`Replay`), so pygls handles it as it
  always did (client capabilities, workspace, our `on_initialize`: folders, initializationOptions)
  and every later frame is still unread in stdin, in its order;
- pygls's own answer to that request id is dropped (`ShiroProtocol._send_response`,
  server/lsp/pygls_overrides.py), after checking it equals what the front sent (logged if not);
- `tests/lsp/test_front.py` compares the front's answer with pygls's for several client
  capability sets, so `CAPABILITIES` cannot drift from what pygls computes.

Anything the front is unsure of (another method first, params of an unexpected shape, a body that
is not JSON) it leaves unanswered and hands over: pygls then answers exactly as before.

Framing is written once, in server/model/lsp_framing.py, for this front, pygls_overrides.read_frames
(its override 7: header names case-insensitive, lines and bodies bounded, a malformed frame logged
with its reason and the connection closed) and the terminal client.
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any, BinaryIO

from ..model.lsp_framing import MALFORMED, MalformedFrame, read_blocking_frame

CONTENT_TYPE = "application/vscode-jsonrpc; charset=utf-8"  # what pygls writes (json_rpc.py)

log = logging.getLogger("pygls.server")  # the logger read_frames reports malformed frames on


class Replay:
    """A blocking stream that first yields `prefix` (what the front read), then `stream`."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = io.BytesIO(prefix)
        self._stream = stream

    def readline(self, limit: int = -1) -> bytes:
        line = self._prefix.readline(limit)
        if line.endswith(b"\n") or (limit >= 0 and len(line) >= limit):
            return line
        return line + self._stream.readline(limit - len(line) if limit >= 0 else -1)

    def read(self, n: int = -1) -> bytes:
        data = self._prefix.read(n)
        if n < 0:
            return data + self._stream.read()
        if len(data) < n:
            data += self._stream.read(n - len(data))
        return data


# What the pygls server answers `initialize` with (pygls.capabilities.ServerCapabilitiesBuilder over
# our features and commands, server/lsp/server.py and server/commands/), but `positionEncoding`,
# which `position_encoding` negotiates, and the command list (`commands()`). tests/lsp/test_front.py
# fails when this drifts.
CAPABILITIES: dict[str, Any] = {
    "textDocumentSync": {"openClose": True, "change": 2, "save": False},
    "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor.rewrite"]},  # server/lsp/code_actions.py
    "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
}


def commands() -> list[str]:
    """executeCommandProvider's list: every command server/protocol.py declares (each module of
    server/commands/ registers its own; tests/lsp/test_front.py checks pygls answers the same set).
    Imported here, not at the top: the front reads the first frame before it."""
    from .. import protocol as p

    return list(p.COMMANDS)


_ENCODINGS = ("utf-8", "utf-16", "utf-32")  # pygls's _SUPPORTED_ENCODINGS


def _is_str_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _plain_initialize_params(params: Any) -> bool:
    """Whether lsprotocol will surely accept these InitializeParams where the answer depends on
    them; anything else is left for pygls to answer (or refuse) as before."""
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    process_id = params.get("processId")
    if process_id is not None and (not isinstance(process_id, int) or isinstance(process_id, bool)):
        return False
    if not all(_is_str_or_none(params.get(key)) for key in ("rootUri", "rootPath", "locale")):
        return False
    if params.get("trace") not in (None, "off", "messages", "verbose"):
        return False
    folders = params.get("workspaceFolders")
    if folders is not None and not (isinstance(folders, list) and all(
            isinstance(f, dict) and isinstance(f.get("uri"), str) and isinstance(f.get("name"), str) for f in folders)):
        return False
    info = params.get("clientInfo")
    if info is not None and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and _is_str_or_none(info.get("version"))):
        return False
    capabilities = params["capabilities"]
    for key in ("general", "workspace", "textDocument", "window", "notebookDocument"):
        if capabilities.get(key) is not None and not isinstance(capabilities[key], dict):
            return False
    sync = (capabilities.get("textDocument") or {}).get("synchronization")
    if sync is not None and not (isinstance(sync, dict) and all(
            sync.get(key) in (None, True, False) for key in ("willSave", "willSaveWaitUntil"))):
        return False
    general = capabilities.get("general") or {}
    encodings = general.get("positionEncodings")
    if encodings is not None and not (isinstance(encodings, list) and all(isinstance(e, str) for e in encodings)):
        return False
    return True


def position_encoding(capabilities: dict[str, Any]) -> str:
    """pygls's ServerCapabilitiesBuilder.choose_position_encoding: the client's first supported
    encoding, else UTF-16."""
    for encoding in (capabilities.get("general") or {}).get("positionEncodings") or []:
        if encoding in _ENCODINGS:
            return str(encoding)
    return "utf-16"


def initialize_result(params: Any, version: str) -> dict[str, Any] | None:
    """The InitializeResult pygls would send for `params`, as JSON; None when the front should not
    answer (pygls will)."""
    if not _plain_initialize_params(params):
        return None
    capabilities = {"positionEncoding": position_encoding(params["capabilities"]), **CAPABILITIES,
                    "executeCommandProvider": {"commands": commands()}}
    # pygls's `_with_text_document_sync`: `client's flag and feature registered` is False (we
    # register neither willSave feature) when the client sent the flag at all, else None (omitted).
    sync = (params["capabilities"].get("textDocument") or {}).get("synchronization") or {}
    flags = {key: False for key in ("willSave", "willSaveWaitUntil") if sync.get(key) is not None}
    if flags:
        capabilities["textDocumentSync"] = {**capabilities["textDocumentSync"], **flags}
    return {"capabilities": capabilities, "serverInfo": {"name": "shiro-neko", "version": version}}


def encode_response(msg_id: Any, result: Any) -> bytes:
    """A response framed as pygls frames it."""
    body = json.dumps({"id": msg_id, "jsonrpc": "2.0", "result": result})
    return f"Content-Length: {len(body)}\r\nContent-Type: {CONTENT_TYPE}\r\n\r\n{body}".encode()


class Handover:
    """What the front did: what pygls must read first, and the `initialize` it answered."""

    def __init__(self, replay: bytes = b"", answered_id: Any = None, answered: dict[str, Any] | None = None,
                 closed: bool = False, malformed: MalformedFrame | None = None) -> None:
        self.replay = replay
        self.answered_id = answered_id
        self.answered = answered
        self.closed = closed  # the input ended or broke: nothing to serve
        self.malformed = malformed  # why it broke, logged (MALFORMED) once the LSP layer is imported

    def log_malformed(self) -> None:
        """After the import thread ended: the root handler's filter (server/cli.py) imports pygls,
        and one package imported from two threads at once is what import locks deadlock on."""
        if self.malformed is not None:
            log.error(MALFORMED, self.malformed)


def answer_initialize(stdin: BinaryIO, stdout: BinaryIO, version: str) -> Handover:
    """Read the first frame; answer it if it is a plain `initialize` (see the module's docstring)."""
    from .trace import mark

    try:
        frame = read_blocking_frame(stdin)
    except MalformedFrame as exc:
        return Handover(closed=True, malformed=exc)
    if frame is None:
        return Handover(closed=True)
    raw, body = frame
    try:
        message = json.loads(body)
    except ValueError:  # pygls reports it (read_frames) and reads on
        return Handover(raw)
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return Handover(raw)
    msg_id = message.get("id")
    if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
        return Handover(raw)
    result = initialize_result(message.get("params"), version)
    if result is None:
        return Handover(raw)
    answer = encode_response(msg_id, result)
    mark("front-initialize-answered")  # before the write: a client that reads the answer finds the mark
    stdout.write(answer)
    stdout.flush()
    return Handover(raw, msg_id, result)
