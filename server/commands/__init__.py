"""Protocol glue: each command decodes its argument, calls the service, encodes the result.

`command()` is the one place that maps failures onto JSON-RPC errors: malformed arguments are
InvalidParams (-32602), refusals RequestFailed (-32803), both with a message a person can act on.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..errors import InvalidArguments, Refused
from ..protocol import _Args, decode_args, to_wire

if TYPE_CHECKING:
    from ..lsp import ShiroServer

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803
A = TypeVar("A", bound=_Args)


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


def command(
    server: "ShiroServer", name: str, kind: type[A]
) -> Callable[[Callable[["ShiroServer", A], Awaitable[Any]]], None]:
    def decorate(fn: Callable[["ShiroServer", A], Awaitable[Any]]) -> None:
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
                return to_wire(await fn(ls, decoded))  # type: ignore[arg-type]
            except InvalidArguments as exc:
                raise JsonRpcInvalidParams(f"{name}: {exc}") from None
            except Refused as exc:
                raise RequestFailed(f"{name}: {exc}") from None

        handler.__name__ = fn.__name__  # not functools.wraps: pygls would read fn's signature
        server.command(name)(handler)

    return decorate


def register_all(server: "ShiroServer") -> None:
    from . import chat, mcp, notebook, session, sessions, stm

    chat.register(server)
    session.register(server)
    sessions.register(server)
    notebook.register(server)
    stm.register(server)
    mcp.register(server)
