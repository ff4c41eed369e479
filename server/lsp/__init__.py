"""The LSP front end: the pygls server class and lifecycle (`server.py`), the editor bridge
(`bridge.py`: notifications, approvals, buffers, edits) and the pygls overrides
(`pygls_overrides.py`). The command handlers are in `commands/`."""

from ..startup import codegen_cache

codegen_cache.install()  # before lsprotocol defines its attrs classes (server/startup/codegen_cache.py)

from .server import ShiroServer, create_server  # noqa: E402

__all__ = ["ShiroServer", "create_server"]
