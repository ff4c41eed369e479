"""The real server over stdio for a test (pytest-lsp): `start_client` starts one `shiro-lsp` as a
subprocess, answers its dialogs and edits as an editor would, and collects what it sends
(`Harness`); `server_env` is the environment such a server (or `shiro`, `shiro acp`) runs with:
the test's SHIRO_NEKO_HOME and settings file, the fake provider, nothing of the machine's user.
The `harness` fixture (tests/lsp/conftest.py) is the common case."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from shiro_neko.protocol import plain
from tests.fake_provider import FakeProvider
from tests.support import warm_pool
from tests.support.waits import EventWaits

CLIENTS = ["visual-studio-code", "neovim"]
HANG = "<never answer>"


# A model id outside the families offered `apply_patch` instead of `edit_file`
# (server/agent/model_family.py): for the tests whose scripted replies call `edit_file`.
EDIT_FILE_MODEL = "test-model"


def server_env(home: Path, base_url: str | None, api_key: str | None = "sk-test-not-a-real-key", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    env["SHIRO_NEKO_HOME"] = str(home)
    env["SHIRO_WARM"] = "0"  # `shiro` spawns its own server: no warm one left behind (tests/clients/test_warm.py tests it)
    # The user settings file (terminal and ACP clients) of this test, not of the machine's user.
    env["SHIRO_NEKO_CONFIG"] = str(home.parent / "user-settings.json")
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    if api_key:
        env["OPENAI_API_KEY"] = api_key
    env.update(extra)
    return env


@dataclass
class Harness(EventWaits):
    client: LanguageClient
    fake: FakeProvider
    home: Path
    root: Path
    events: list[dict[str, Any]] = field(default_factory=list)
    todos: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)  # approval answers, default Allow
    asked: list[str] = field(default_factory=list)
    edits: list[Any] = field(default_factory=list)
    apply_edits: bool = True
    init_result: Any = None
    hang: asyncio.Event = field(default_factory=asyncio.Event)
    before_answer: Any = None  # called as an approval dialog opens, before it is answered

    async def command(self, name: str, *arguments: Any) -> Any:
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments) if arguments else None)
        )
        return plain(result)

    async def chat(self, prompt: str, **extra: Any) -> dict[str, Any]:
        return await self.command("shiro.chat", {"prompt": prompt, **extra})

    def start_chat(self, prompt: str, msg_id: str | None = None, **extra: Any) -> asyncio.Future[Any]:
        params = types.ExecuteCommandParams(command="shiro.chat", arguments=[{"prompt": prompt, **extra}])
        return asyncio.ensure_future(
            self.client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
        )


async def start_client(
    harness_kwargs: dict[str, Any],
    capabilities: str,
    env: dict[str, str],
    init_options: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    folders: list[Path] | None = None,
    experimental: dict[str, Any] | None = None,
    cold: bool = False,
) -> Harness:
    """`cold`: a freshly spawned interpreter, for a test that signals or measures the server's own
    process or needs what only a fresh one has; else a fork of the test process's warm server
    (tests/support/warm_pool.py)."""
    client = make_test_lsp_client()
    h = Harness(client=client, **harness_kwargs)

    @client.feature("shiro/event")
    def on_event(params: Any) -> None:
        h.events.append(plain(params))

    @client.feature("shiro/todos")
    def on_todos(params: Any) -> None:
        h.todos.append(plain(params))

    @client.feature("shiro/status")
    def on_status(params: Any) -> None:
        h.statuses.append(plain(params))

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_ask(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        h.asked.append(params.message)
        if h.before_answer is not None:
            h.before_answer()
        answer = h.answers.pop(0) if h.answers else "Allow"
        if answer == HANG:  # the user walks away from the dialog (until the test lets go)
            await h.hang.wait()
            return None
        return types.MessageActionItem(title=answer) if answer else None

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        h.edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=h.apply_edits)

    @client.feature("shiro/saveDocuments")
    def on_save(params: Any) -> None:
        """An editor that offers `shiro/saveDocuments` (experimental `{"shiro": {"saveDocuments":
        true}}`) saves what it applied: the newest whole-document text of each uri."""
        for uri in getattr(params, "uris", None) or []:
            for edit in reversed(h.edits):
                texts = [e.new_text for e in (edit.edit.changes or {}).get(uri, [])]
                for change in edit.edit.document_changes or []:
                    if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
                        texts = [e.new_text for e in change.edits]
                if texts:
                    Path(uri.removeprefix("file://")).write_text(texts[-1])
                    break

    if settings is not None:
        client.set_configuration(settings, section="shiro")
    env = dict(env)
    argv = [sys.executable, "-m", "shiro_neko"] if cold else warm_pool.spawn_argv(env)
    await client.start_io(*argv, env=env)
    folders = folders or [h.root]
    caps = client_capabilities(capabilities)
    if experimental:  # what a client adds of its own, e.g. {"shiro": {"approvals": True}}
        caps.experimental = {**(plain(caps.experimental) or {}), **experimental}
    h.init_result = await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=folders[0].as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=init_options,
        )
    )
    return h


async def start_server(
    tmp_path: Path, fake: FakeProvider, workspace: Path, capabilities: str = CLIENTS[0], env: dict[str, str] | None = None, **kw: Any
) -> Harness:
    """`start_client` the usual way: home `tmp_path/home`, the fake provider, VS Code's
    capabilities unless named; `env` adds to `server_env`, the rest goes to `start_client`."""
    home = tmp_path / "home"
    return await start_client({"fake": fake, "home": home, "root": workspace}, capabilities, server_env(home, fake.base_url, **(env or {})), **kw)


async def stop(h: Harness) -> None:
    """Shut the server down as an editor does (shutdown, exit), and wait for its process."""
    await h.client.shutdown_session()
    await h.client.stop()
