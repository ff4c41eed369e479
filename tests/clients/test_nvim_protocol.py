"""The Neovim plugin takes every wire name from one module, `lua/shiro/protocol.lua`, and that
module names only what docs/protocol.schema.json (generated from protocol.py) defines."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "clients" / "nvim"
NAMES = PLUGIN / "lua" / "shiro" / "protocol.lua"
SCHEMA = json.loads((ROOT / "docs" / "protocol.schema.json").read_text(encoding="utf-8"))

_SECTION = re.compile(r"^  (\w+) = \{\n(.*?)^  \},", re.M | re.S)
_ENTRY = re.compile(r'^    (\w+) = "([^"]+)",$', re.M)


def lua_names() -> dict[str, dict[str, str]]:
    """The module's tables, read from its (deliberately plain) source: `section = { key = "name", }`."""
    text = NAMES.read_text(encoding="utf-8")
    sections = {m.group(1): dict(_ENTRY.findall(m.group(2))) for m in _SECTION.finditer(text)}
    assert sections and all(sections.values()), "protocol.lua is not in the plain shape this test reads"
    return sections


def event_types() -> set[str]:
    refs = SCHEMA["$defs"]["Event"]["anyOf"]
    return {SCHEMA["$defs"][r["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["enum"][0] for r in refs}


def test_every_name_in_the_lua_module_is_in_the_schema() -> None:
    names = lua_names()
    assert set(names) == {"commands", "notifications", "server_requests", "events"}
    assert set(names["commands"].values()) <= set(SCHEMA["properties"]["commands"]["properties"])
    assert set(names["notifications"].values()) <= set(SCHEMA["properties"]["notifications"]["properties"])
    assert set(names["server_requests"].values()) <= set(SCHEMA["properties"]["serverRequests"]["properties"])
    assert set(names["events"].values()) <= event_types()
    for key, value in names["commands"].items():
        assert value == f"shiro.{key}", (key, value)  # keys say what the plugin calls them
    for key, value in names["events"].items():
        assert key == value


def test_the_plugin_writes_no_wire_name_anywhere_else() -> None:
    wire = {v for section in lua_names().values() for v in section.values()} | event_types()
    wire |= set(SCHEMA["properties"]["commands"]["properties"]) | set(SCHEMA["properties"]["notifications"]["properties"])
    literal = re.compile(r'(?<!require\()"([^"\n]*)"')  # require("shiro.chat") is a Lua module
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {m}"
        for path in sorted(PLUGIN.rglob("*.lua"))
        if path != NAMES
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in literal.findall(line)
        if m in wire
    ]
    assert not offenders, "take these from require('shiro.protocol'):\n" + "\n".join(offenders)
