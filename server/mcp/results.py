"""An MCP `CallToolResult` as the text of a tool result the model reads.

Text blocks stay text; structured content is shown as JSON only when no text block says anything;
images, audio and binary resources become a one-line placeholder (the model cannot read base64,
and it would eat the context). Everything then goes through the same output cap as our own tools.
Works on the SDK's objects by attribute, so this module does not import the SDK.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from ..agent.tools.output_cap import cap_output


def _size_of_base64(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data) * 3 // 4
    return f"{size:,} bytes"


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", None) or kind
        return f"[{kind} {mime}, {_size_of_base64(str(getattr(block, 'data', '')))} - not shown]"
    if kind == "resource_link":
        return f"[resource link: {getattr(block, 'uri', '')}]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        mime = getattr(resource, "mime_type", None) or "binary"
        return f"[resource {getattr(resource, 'uri', '')} ({mime}, {_size_of_base64(str(getattr(resource, 'blob', '')))}) - not shown]"
    return f"[{kind or 'unknown'} content - not shown]"


def result_text(result: Any) -> str:
    """The whole result as one text, before the cap: said once.

    The MCP spec asks a tool that returns structured content to repeat it as text for clients like
    us, and the official servers do, each in its own shape (server-filesystem's `{"content": text}`
    beside the file's text, server-memory's `{"entities": [...]}` beside its JSON dump): so the
    content blocks are the result whenever one of them says something, and the structured content
    is sent only when none does. Sending both put a file in the request twice and let the output
    cap cut it in half.
    """
    blocks = getattr(result, "content", None) or []
    parts = [_block_text(block) for block in blocks]
    says_something = any(getattr(block, "type", None) == "text" and str(getattr(block, "text", "")).strip() for block in blocks)
    structured = getattr(result, "structured_content", None)
    if structured is not None and not says_something:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return "\n".join(parts) if parts else "(the tool returned no content)"


def render_result(server: str, tool: str, result: Any) -> tuple[str, bool]:
    """(output, is_error) for the transcript; an error result names the server and the tool."""
    text = result_text(result)
    if getattr(result, "is_error", False):
        return cap_output(f"MCP tool {tool!r} of server {server!r} failed: {text}"), True
    return cap_output(text), False
