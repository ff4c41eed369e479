"""A core tool's arguments, defined once as a msgspec Struct: the JSON schema the model sees and
the check of what it sends both come from that one definition.

Why msgspec: it already types every wire payload (protocol.py), its `json.schema` writes the
schema from the Struct (types, bounds, enums, descriptions), and `convert` checks a decoded
object against the same Struct in C; a hand-written validator beside a hand-written schema
drifted apart. MCP tools keep their servers' schemas (mcp/tools.py checks those).

Malformed arguments never raise past `run_tool` (tools/registry.py): each problem becomes a
`ToolError` sentence the model reads and can act on ("argument 'path' must be a string, got 3").
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any, TypeVar

import msgspec

from .base import ToolError

# What the model should send, by the JSON type a msgspec message names.
_EXPECTED: dict[str, str] = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}

_BOUND_WORDS: dict[str, str] = {">=": "at least", "<=": "at most", ">": "greater than", "<": "less than"}

_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_WRONG_TYPE = re.compile(r"^Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`$")
_BOUND = re.compile(r"^Expected `(?:int|float)` (?P<op>[<>]=?) (?P<limit>\S+)$")
_LENGTH = re.compile(r"^Expected `(?:str|array|object)` of length (?P<op>[<>]=?) (?P<limit>\d+)$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]+)`$")
_ENUM = re.compile(r"^Invalid enum value (?P<value>.+)$")


# `Meta(extra_json_schema={ENUM_ORDER: [...]})` on a Literal field: the order the model reads its
# values in (a lifecycle such as pending, in_progress, completed); msgspec sorts them.
ENUM_ORDER = "x-enum-order"


def _strip_titles(node: Any) -> Any:
    """msgspec's schema less what providers do not need (`title`: the Struct's class name), enums
    in their declared order and with their type."""
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties":  # a map of argument names, where "title" may be an argument
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    if ENUM_ORDER in out:  # the Literal's own order, which msgspec's sorted `enum` loses
        out["enum"] = out.pop(ENUM_ORDER)
    enum = out.get("enum")
    if "type" not in out and isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        out = {"type": "string", **out}  # as providers document enums: with their type
    return out


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every `$ref` replaced by its definition: one self-contained object, as the
    function-calling APIs take it (nested Structs are small and never recursive here)."""
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _inline(defs[ref.rsplit("/", 1)[-1]], defs)
    return {key: _inline(value, defs) for key, value in node.items()}


@cache
def json_schema(arguments: type[msgspec.Struct]) -> dict[str, Any]:
    """The arguments object's JSON schema for the provider, from the Struct.

    Optional arguments are fields defaulting to `msgspec.UNSET` (left out of `required`); a Struct
    with `forbid_unknown_fields=True` says `additionalProperties: false`. Tools are sent with
    `strict: false` (agent/provider/wire_responses.py), so optional fields need no null type.
    Enums keep the Literal's order through ENUM_ORDER."""
    (top,), components = msgspec.json.schema_components([arguments], ref_template="#/$defs/{name}")
    schema = _strip_titles(_inline(top, components))
    assert isinstance(schema, dict) and schema.get("type") == "object", arguments
    schema.pop("description", None)  # the Struct's docstring is for readers; the tool has its own
    return schema


def _shown(value: Any) -> str:
    return json.dumps(value, default=str)[:200]


def _value_at(args: Any, path: str) -> Any:
    """The value msgspec's path (`.todos[0].status`) points at in `args`, or None."""
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        try:
            args = args[name] if name else args[int(index)]
        except (KeyError, IndexError, TypeError):
            return None
    return args


def _allowed(schema: dict[str, Any], path: str) -> list[Any]:
    """The enum values the schema allows at `path` (for the error's "one of ...")."""
    node: Any = schema
    for name, _ in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        node = node.get("properties", {}).get(name, {}) if name else node.get("items", {})
    return list(node.get("enum", [])) if isinstance(node, dict) else []


def explain(error: msgspec.ValidationError, args: Any, schema: dict[str, Any], tool_name: str) -> str:
    """msgspec's message as a sentence about the model's arguments."""
    match = _AT.match(str(error))
    what, path = (match["what"], match["path"] or "") if match else (str(error), "")
    name = path.lstrip(".")
    if m := _MISSING.match(what):
        return f"missing required argument {(name + '.' if name else '') + m['name']!r} for {tool_name}"
    if m := _UNKNOWN.match(what):
        return f"unknown argument {(name + '.' if name else '') + m['name']!r} for {tool_name}"
    if m := _WRONG_TYPE.match(what):
        want = _EXPECTED.get(m["want"], m["want"])
        return f"argument {name!r} must be {want}, got {_shown(_value_at(args, path))}"
    if m := _BOUND.match(what):
        return f"argument {name!r} must be {_BOUND_WORDS[m['op']]} {m['limit']}, got {_shown(_value_at(args, path))}"
    if m := _LENGTH.match(what):
        unit = "characters" if isinstance(_value_at(args, path), str) else "items"
        return f"argument {name!r} must have {_BOUND_WORDS[m['op']]} {m['limit']} {unit}"
    if _ENUM.match(what):
        allowed = ", ".join(str(v) for v in _allowed(schema, path))
        return f"argument {name!r} must be one of {allowed}, got {_shown(_value_at(args, path))}"
    return f"invalid arguments for {tool_name}: {error}"


def _normalised(value: Any, schema: dict[str, Any]) -> Any:
    """What the model meant, where the schema says what it is: null for an optional key means "not
    given" (strict-mode models send every key), at any depth where the schema names the keys (a
    todo's `note` too); 12.0 is how some models write the integer 12. Anything else is left for
    msgspec to check."""
    if isinstance(value, float) and schema.get("type") == "integer" and value.is_integer():
        return int(value)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_normalised(v, schema["items"]) for v in value]
    if not isinstance(value, dict) or "properties" not in schema:
        return value
    props, required = schema["properties"], schema.get("required", [])
    return {
        k: _normalised(v, props[k]) if k in props else v
        for k, v in value.items()
        if v is not None or k in required
    }


def decode_object(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """The call's arguments as a JSON object, or ToolError saying what was wrong with them."""
    if raw is None or isinstance(raw, str) and not raw.strip():
        args: Any = {}  # some models send "" for a call without arguments
    elif isinstance(raw, str):
        try:
            args = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolError(f"invalid JSON arguments: {exc}; send one JSON object") from None
    else:
        args = raw
    if not isinstance(args, dict):
        raise ToolError(f"arguments must be a JSON object, got {_shown(args)}")
    return args


S = TypeVar("S", bound=msgspec.Struct)


def check_arguments(arguments: type[S], args: dict[str, Any], tool_name: str) -> S:
    """`args` decoded into the Struct (normalised first, as `_normalised` says): what the tool's
    `run` receives, or ToolError naming every missing or unknown top-level argument, else the
    first other problem msgspec finds. Optional arguments not given are `msgspec.UNSET`."""
    schema = json_schema(arguments)
    props: dict[str, Any] = schema.get("properties", {})
    required: list[str] = schema.get("required", [])
    args = _normalised(args, schema)
    unknown = sorted(set(args) - set(props))
    if unknown and schema.get("additionalProperties") is False:
        raise ToolError(
            f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)} "
            f"for {tool_name}; it takes {', '.join(repr(k) for k in props) or 'no arguments'}"
        )
    missing = [k for k in required if k not in args]
    if missing:
        raise ToolError(
            f"missing required argument{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(k) for k in missing)} for {tool_name}"
        )
    try:
        # Strict: bool is not an int, as in JSON, and "12" is not a number (nor "[...]" an array:
        # the model reads "argument 'todos' must be an array" and sends one).
        return msgspec.convert(args, type=arguments)
    except msgspec.ValidationError as exc:
        raise ToolError(explain(exc, args, schema, tool_name)) from None
