"""server/startup/warm.py's codec warm-up: after it, a fork's first `initialize` and the messages of a
turn compile no cattrs code, and the warm server object is still as new as an unstarted one."""

from __future__ import annotations

from typing import Any

import cattrs.gen
import pytest

from shiro_neko.startup import warm
from shiro_neko.lsp import create_server


def test_after_the_warm_up_nothing_is_generated_again_and_the_server_is_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    server = create_server()
    warm._warm_codecs(server)
    generated: list[Any] = []
    original = cattrs.gen.make_dict_unstructure_fn_from_attrs

    def counting(*args: Any, **kwargs: Any) -> Any:
        generated.append(args[1] if len(args) > 1 else kwargs.get("cl"))
        return original(*args, **kwargs)

    monkeypatch.setattr(cattrs.gen, "make_dict_unstructure_fn_from_attrs", counting)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": 1, "rootUri": "file:///tmp", "capabilities": {"workspace": {"workspaceFolders": True}}}}
    warm._convert_once(server, hello)  # raises if pygls' API moved (the warm server itself ignores that)
    assert generated == []
    assert not hasattr(server.protocol, "client_capabilities")  # initialize was only decoded, never handled
    assert server.service.workspaces.all() == []
