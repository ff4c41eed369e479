"""Protocol glue: each command decodes its argument, calls the service, encodes the result.

`command()` is the one place that maps failures onto JSON-RPC errors: malformed arguments are
InvalidParams (-32602), refusals RequestFailed (-32803), both with a message a person can act on.
It also holds every handler to `protocol.COMMANDS`: the argument type must be the registered one
and the result an instance of the registered result type, so the schema cannot drift from what
the server sends.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Awaitable, Callable, TypeVar

import msgspec
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..errors import InvalidArguments, Refused
from ..lsp.pygls_overrides import order_commands
from ..protocol import COMMANDS, Args, decode_args, to_wire

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803
A = TypeVar("A", bound=Args)
R = TypeVar("R", bound=msgspec.Struct)


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


def command(
    server: "ShiroServer", name: str, kind: type[A]
) -> Callable[[Callable[["ShiroServer", A], Awaitable[R]]], None]:
    spec = COMMANDS[name]
    if spec.args is not kind:
        raise TypeError(f"{name} takes {spec.args.__name__} in protocol.COMMANDS, not {kind.__name__}")

    def decorate(fn: Callable[["ShiroServer", A], Awaitable[R]]) -> None:
        # pygls evaluates the handler's annotations, so `ls` stays unannotated (import cycle);
        # *args because an omitted argument means {}.
        async def handler(ls, *args):  # type: ignore[no-untyped-def]
            try:
                decoded = decode_args(args, kind)
            except ValueError as exc:
                raise JsonRpcInvalidParams(f"{name}: {exc}") from None
            # Every command sees the client's settings, not only initializationOptions.
            await ls.settings_ready()
            try:
                result = await fn(ls, decoded)
            except InvalidArguments as exc:
                raise JsonRpcInvalidParams(f"{name}: {exc}") from None
            except Refused as exc:
                raise RequestFailed(f"{name}: {exc}") from None
            if not isinstance(result, spec.result):
                raise TypeError(f"{name} answered {type(result).__name__}, not {spec.result.__name__}")
            return to_wire(result)

        handler.__name__ = fn.__name__  # not functools.wraps: pygls would read fn's signature
        server.command(name)(handler)

    return decorate


def register_all(server: "ShiroServer") -> None:
    from . import editor
    from . import chat, checkpoints, effort, history, live_session, mcp, project_memory, saved_sessions, stm, todos

    chat.register(server)
    live_session.register(server)
    saved_sessions.register(server)
    project_memory.register(server)
    todos.register(server)
    effort.register(server)
    history.register(server)
    stm.register(server)
    mcp.register(server)
    checkpoints.register(server)
    editor.register(server)
    from . import mode

    mode.register(server)
    from . import permissions

    permissions.register(server)
    from . import models

    models.register(server)
    from . import session_admin

    session_admin.register(server)
    from . import custom_commands

    custom_commands.register(server)
    # executeCommandProvider lists them in protocol.COMMANDS's order, as the front does before pygls
    # is imported (server/startup/lsp_front.py commands()).
    order_commands(server, list(COMMANDS))
