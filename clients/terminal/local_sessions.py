"""`shiro sessions`, answered in this process from the session store (docs/performance.md).

A listing only reads the store, and the store is built for several processes at once (the index
is guarded by a file lock, every write is atomic, a damaged file is found and copied aside by
whichever process meets it first), so starting or attaching to a language server just to call
`shiro.sessions` added only its start (a second interpreter, pygls and lsprotocol) to the one
thing asked. `state/` never imports pygls, the agent or the LSP glue (tests/unit/test_architecture.py),
so this stays a small import. The rows are the same `SessionSummary` structs the server sends,
turned into the same JSON; a corrupt file is reported on stderr (the server logged it where the
terminal never showed it). This is the one module of the client that may import `state/`.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from .main import err


def list_here(cwd: Path, limit: int) -> list[dict[str, Any]]:
    """What `shiro.sessions {limit}` answers for the workspace `cwd`, as JSON values."""
    import msgspec

    from ..state.paths import shiro_home
    from ..state.session_store import SessionStore

    rows = SessionStore(shiro_home()).list(cwd, max(1, limit))
    return msgspec.to_builtins(rows)  # type: ignore[no-any-return]


class _ToStderr(logging.Handler):
    """The store's warnings (a corrupt file found, copied aside) as `shiro: ...` lines."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err(f"shiro: {record.getMessage()}")
        except Exception:  # a closed stderr must not end the listing
            pass


def run_sessions(args: argparse.Namespace, cwd: Path) -> int:
    from . import render
    from ..state.atomic import StateError
    from ..user_settings import load_user_settings

    for problem in load_user_settings(cwd).problems:  # named as a turn would name it
        err(f"shiro: settings file {problem}")
    state_log = logging.getLogger("shiro_neko.state")
    state_log.addHandler(_ToStderr(logging.WARNING))
    state_log.setLevel(logging.WARNING)
    try:
        rows = list_here(cwd, args.limit)
    except (StateError, OSError) as exc:
        err(f"shiro: {exc}")
        return 1
    if args.json:
        from ..model.visible_text import json_visible

        # The same JSON value, with no character a terminal acts on (a title is untrusted text).
        print(json_visible(json.dumps({"sessions": rows}, indent=2, ensure_ascii=False)))
    else:
        color = sys.stdout.isatty()
        for line in render.sessions_lines(rows):
            print(render.to_ansi(line, color))
    return 0
