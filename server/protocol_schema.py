"""`docs/protocol.schema.json`: a JSON Schema of every command argument and result, notification
and server request, generated from `protocol.py`'s registries with msgspec's own schema support.

    python -m shiro_neko.protocol_schema            # rewrite docs/protocol.schema.json
    python -m shiro_neko.protocol_schema --check    # exit 1 when the file is stale
    python -m shiro_neko.protocol_schema -o PATH    # write elsewhere ("-" = stdout)

Clients generate their types from the file (the VS Code extension's TypeScript, the Neovim
plugin's names module is checked against it); a unit test fails when the checked-in file is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from . import protocol

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "docs" / "protocol.schema.json"
_REF = "#/$defs/{name}"




def build_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema (draft 2020-12) document."""
    commands = list(protocol.COMMANDS.values())
    messages = list(protocol.NOTIFICATIONS.values()) + list(protocol.SERVER_REQUESTS.values())
    types: list[Any] = [c.args for c in commands] + [c.result for c in commands]
    types += [m.params for m in messages] + [m.result for m in messages if m.result is not None]
    schemas, defs = msgspec.json.schema_components(types, ref_template=_REF)
    it = iter(schemas)
    arg_refs = [next(it) for _ in commands]
    result_refs = [next(it) for _ in commands]
    param_refs = [next(it) for _ in messages]
    request_results = [next(it) if m.result is not None else {"type": "null"} for m in messages]
    # The event union has no name of its own in msgspec's output: give it one clients can import.
    event_index = next(i for i, m in enumerate(messages) if m.method == protocol.EVENT)
    defs["Event"] = param_refs[event_index]
    param_refs[event_index] = {"$ref": _REF.format(name="Event")}

    def entry(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    command_props = {
        c.name: entry({"command": {"const": c.name}, "arguments": arg_refs[i], "result": result_refs[i]})
        for i, c in enumerate(commands)
    }
    notification_props: dict[str, Any] = {}
    request_props: dict[str, Any] = {}
    for i, m in enumerate(messages):
        if m.method in protocol.NOTIFICATIONS:
            notification_props[m.method] = entry({"method": {"const": m.method}, "params": param_refs[i]})
        else:
            request_props[m.method] = entry(
                {"method": {"const": m.method}, "params": param_refs[i], "result": request_results[i]}
            )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "Generated from server/protocol.py by `python -m shiro_neko.protocol_schema`; do not edit.",
        "title": "ShiroNekoProtocol",
        "type": "object",
        "properties": {
            "commands": entry(command_props),
            "notifications": entry(notification_props),
            "serverRequests": entry(request_props),
        },
        "required": ["commands", "notifications", "serverRequests"],
        "$defs": dict(sorted(defs.items())),
    }


def render() -> str:
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shiro_neko.protocol_schema", description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_PATH, help="where to write (default: %(default)s; - for stdout)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs from what would be written")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
        if current != text:
            print(f"{args.output} is stale: run python -m shiro_neko.protocol_schema", file=sys.stderr)
            return 1
        return 0
    if str(args.output) == "-":
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
