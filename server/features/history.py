"""Prompt history per workspace (`history/<key>.json`): every prompt, queued ones too.

Appends go through one worker thread so they land in the order the prompts were sent, and the
file lock in `PromptHistory` keeps two servers from losing each other's entries.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from ..protocol import HistoryResult
from ..state.atomic import StateError
from ..state.history import PromptHistory
from ..state.paths import shiro_home
from ..workspaces import Workspace

log = logging.getLogger(__name__)


class HistoryFeature:
    def __init__(self) -> None:
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shiro-history")

    def _store(self, workspace: Workspace) -> PromptHistory:
        return PromptHistory(shiro_home(), workspace.key)

    def _add(self, workspace: Workspace, prompt: str) -> None:
        try:
            self._store(workspace).add(prompt)
        except StateError as exc:  # history is a convenience: never fail a turn over it
            log.warning("prompt not added to history: %s", exc)

    def record(self, workspace: Workspace, prompt: str) -> None:
        self._writer.submit(self._add, workspace, prompt)

    async def load(self, workspace: Workspace) -> HistoryResult:
        # Reads queue behind pending appends, so a prompt just sent is in the answer.
        prompts = await asyncio.get_running_loop().run_in_executor(self._writer, self._store(workspace).load)
        return HistoryResult(prompts=prompts)

    def flush(self) -> None:
        """Wait for appends already queued (shutdown)."""
        self._writer.submit(lambda: None).result()
