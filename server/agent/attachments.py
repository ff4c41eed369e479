"""Files the user attached to a prompt (`@path` in the terminal client, `attachments` on the wire).

They go to the model with the prompt, as one text part each; the title and the prompt history
keep only what the user typed.
"""

from __future__ import annotations

from .tools.base import ToolError, ToolHost
from .tools.files import current_text
from .tools.workspace_paths import resolve_workspace_path, workspace_relative

MAX_CHARS = 200_000


class AttachmentError(ValueError):
    pass


def read_attachments(host: ToolHost, paths: list[str]) -> list[str]:
    """One `<attached-file>` block per path: open buffers first, inside the workspace only."""
    blocks: list[str] = []
    for raw in dict.fromkeys(paths):  # each file once, in the order given
        try:
            path = resolve_workspace_path(host.root, raw)
            text = current_text(host, path, raw)
        except ToolError as exc:
            raise AttachmentError(f"cannot attach {raw!r}: {exc}") from None
        blocks.append(file_block(workspace_relative(host.root, path), text))
    return blocks


def file_block(shown: str, text: str) -> str:
    """One attached file as the model sees it (also what ACP's embedded resources become)."""
    note = ""
    if len(text) > MAX_CHARS:
        note = f"\n[... truncated: showing the first {MAX_CHARS:,} of {len(text):,} characters]"
        text = text[:MAX_CHARS]
    return f'<attached-file path="{shown}">\n{text}{note}\n</attached-file>'

