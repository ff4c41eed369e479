"""The terminal client's images (issue 40, clients/terminal/image_attach.py): `@shot.png` in the
workspace is an attachment the server checks; a path outside it (typed, or dropped as a quoted
path) is read by the client and sent as `images`; a subagent's events are indented lines."""

from __future__ import annotations

import base64
from pathlib import Path

from shiro_neko import protocol as wire
from shiro_neko.client import image_attach, nested, render
from shiro_neko.client.interactive import attach_files

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def test_workspace_image_is_an_attachment_and_outside_ones_are_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "shot.png").write_bytes(PNG)
    outside = tmp_path / "My Screenshot.png"
    outside.write_bytes(PNG)
    paths, notes = attach_files("@shot.png what is it?", ws)
    assert paths == ["shot.png"] and notes == ["attached image shot.png (1 KB)"]
    images, notes = image_attach.outside_images(f"and '{outside}' too, and @{tmp_path}/missing.png")
    assert [(i["name"], i["mediaType"]) for i in images] == [("My Screenshot.png", "image/png")]
    assert base64.b64decode(images[0]["data"]) == PNG and len(notes) == 1
    assert image_attach.outside_images("@shot.png /etc/passwd")[0] == []  # not images, or not absolute


def test_a_subagent_event_is_an_indented_dim_line() -> None:
    tools = render.ToolNames()
    call = wire.ToolCallEvent(sessionId="s", turnId="t", toolCallId="c2", toolName="grep", input={"pattern": "hello"},
                              parentToolCallId="c1")
    assert nested.parent_of(call) == "c1"
    [line] = nested.lines(call, tools)
    assert line[0] == ("dim", nested.INDENT) and all(style == "dim" for style, _ in line) and "grep hello" in "".join(t for _, t in line)
    delta = wire.TextDeltaEvent(sessionId="s", turnId="t", text="thinking", parentToolCallId="c1")
    assert nested.lines(delta, tools) == []
    assert nested.parent_of(wire.TextDeltaEvent(sessionId="s", turnId="t", text="x")) is None


def test_a_resumed_prompt_says_it_had_images() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": "look"}],
                 "images": [{"name": "a.png", "mediaType": "image/png", "width": 4, "height": 4}]}]
    lines = render.resumed_lines({"sessionId": "s", "title": "look", "messages": messages})
    assert "look  [1 image]" in "".join(text for _, text in lines[-1])
