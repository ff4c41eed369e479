"""The openai SDK's own request types as a check the fake provider runs on every request body.

The SDK's `ResponseCreateParamsStreaming` / `CompletionCreateParamsStreaming` are TypedDicts; pydantic
validates them with `TypeAdapter`. Two things make a plain adapter too weak or too noisy, so this
module adjusts the types, not the rules:

* `Iterable[X]` fields (the input items, a message's content parts, a reasoning item's summary)
  are validated lazily by pydantic, i.e. not at all until iterated: every TypedDict is rebuilt with
  `list[X]` in their place, recursively, so every item is checked.
* A union of item types makes pydantic report every member's errors. The top-level lists
  (`input`, `tools`, `messages`) are checked item by item against the member(s) their `type` (or,
  for Chat messages, `role`) names; inside an item, errors of members whose `type` literal did not
  match are dropped, so the one reported is the one the real API names.

Unknown keys are refused (`extra="forbid"`), as the real API answers `Unknown parameter`. A rejection
is (message, param, code) in the real API's words: `Missing required parameter: 'input[6].id'.`,
`Unknown parameter: 'input[0].bogus'.`, `Invalid type for 'input[2].output': expected a string, but
got an integer instead.`, `Invalid value: 'x'. Supported values are: ...`.
"""

from __future__ import annotations

import collections.abc
import functools
import re
import typing
from typing import Any, Literal, Union

import typing_extensions
from pydantic import ConfigDict, TypeAdapter, ValidationError

_FORBID = ConfigDict(extra="forbid")
_TAG = re.compile(r"[a-z_][a-z0-9_]*")
_BUILTIN_TAGS = {"str", "int", "float", "bool", "bytes", "none"}


class Rejected(Exception):
    def __init__(self, message: str, param: str | None, code: str | None) -> None:
        super().__init__(message)
        self.message, self.param, self.code = message, param, code


# --------------------------------------------------------------------------- eager types

_rebuilt: dict[int, Any] = {}


def _eager(tp: Any) -> Any:
    """`tp` with every Iterable[X] replaced by list[X], TypedDicts rebuilt with eager fields."""
    if typing_extensions.is_typeddict(tp):
        return _eager_typeddict(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args:
        return tp
    if origin in (collections.abc.Iterable, list, collections.abc.Sequence) and len(args) == 1:
        return list[_eager(args[0])]  # type: ignore[misc]
    if origin is Union:
        return Union[tuple(_eager(a) for a in args)]
    if origin is typing_extensions.Required:
        return typing_extensions.Required[_eager(args[0])]
    if origin is typing_extensions.NotRequired:
        return typing_extensions.NotRequired[_eager(args[0])]
    if origin is typing.Annotated:
        return _eager(args[0])  # the SDK's PropertyInfo (aliases) is for its own serialiser
    if origin is dict and len(args) == 2:
        return dict[args[0], _eager(args[1])]  # type: ignore[misc,valid-type]
    return tp


def _eager_typeddict(td: Any) -> Any:
    if id(td) in _rebuilt:
        return _rebuilt[id(td)]
    hints = typing.get_type_hints(td, include_extras=True)
    required = td.__required_keys__
    fields: dict[str, Any] = {}
    for name, hint in hints.items():
        inner = _eager(hint)
        origin = typing.get_origin(inner)
        if origin not in (typing_extensions.Required, typing_extensions.NotRequired):
            inner = typing_extensions.Required[inner] if name in required else typing_extensions.NotRequired[inner]
        fields[name] = inner
    new = typing_extensions.TypedDict(td.__name__, fields, total=False)  # type: ignore[operator]
    new.__pydantic_config__ = _FORBID  # type: ignore[attr-defined]
    _rebuilt[id(td)] = new
    return new


@functools.lru_cache(maxsize=None)
def _adapter(td: Any) -> TypeAdapter[Any]:
    return TypeAdapter(_eager(td))


# --------------------------------------------------------------------------- errors


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and (not _TAG.fullmatch(part) or part in _BUILTIN_TAGS)


def _path(prefix: str, loc: tuple[Any, ...]) -> str:
    out = prefix
    for part in loc:
        if _is_tag(part):
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_KIND = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer", "float_type": "a number",
    "bool_type": "a boolean", "dict_type": "an object", "list_type": "an array", "typed_dict_type": "an object",
    "model_type": "an object", "none_required": "null",
}


def _got(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def _pick(errors: list[Any]) -> Any:
    """The error the real API would name: not one of a union member that is the wrong kind of value
    (a `type`/`role` literal that does not match, or a string member given an array)."""
    wrong: set[tuple[Any, ...]] = set()
    for e in errors:
        loc = tuple(e["loc"])
        if e["type"] == "literal_error" and len(loc) >= 2 and loc[-1] in ("type", "role") and _is_tag(loc[-2]):
            wrong.add(loc[:-1])  # the member: its loc up to and including its tag
        elif e["type"].endswith("_type") and loc and _is_tag(loc[-1]):
            wrong.add(loc)

    def depth(e: Any) -> int:
        return len([p for p in e["loc"] if not _is_tag(p)])

    kept = [e for e in errors if not any(tuple(e["loc"])[: len(w)] == w for w in wrong)]
    if not kept:
        # No member of some union matched: name the deepest `type` that is not one of its values.
        kept = [e for e in errors if e["type"] == "literal_error" and tuple(e["loc"])[-1:] in (("type",), ("role",))] or errors
    return max(kept, key=depth)  # the deepest path got furthest into the value; among equals, the first


def _rejection(prefix: str, error: Any) -> Rejected:
    path = _path(prefix, tuple(error["loc"]))
    kind = error["type"]
    if kind == "missing":
        return Rejected(f"Missing required parameter: '{path}'.", path, "missing_required_parameter")
    if kind == "extra_forbidden":
        return Rejected(f"Unknown parameter: '{path}'.", path, "unknown_parameter")
    if kind in ("literal_error", "enum"):
        expected = (error.get("ctx") or {}).get("expected", "")
        return Rejected(f"Invalid value: {error.get('input')!r}. Supported values are: {expected}.", path, "invalid_value")
    expected = _KIND.get(kind, kind)
    return Rejected(
        f"Invalid type for '{path}': expected {expected}, but got {_got(error.get('input'))} instead.", path, "invalid_type"
    )


def _check(td: Any, value: Any, prefix: str) -> None:
    try:
        _adapter(td).validate_python(value, strict=True)
    except ValidationError as exc:
        raise _rejection(prefix, _pick(exc.errors())) from None


# --------------------------------------------------------------------------- item dispatch


def _members(union: Any) -> list[Any]:
    return [m for m in typing.get_args(union) if typing_extensions.is_typeddict(m)]


def _literal_values(td: Any, key: str) -> tuple[Any, ...]:
    hint = typing.get_type_hints(td, include_extras=True).get(key)
    while hint is not None and typing.get_origin(hint) in (typing_extensions.Required, typing_extensions.NotRequired, typing.Annotated, Union):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = args[0] if len(args) == 1 or typing.get_origin(hint) is not Union else None
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else ()


def _by_key(union: Any, key: str) -> dict[Any, list[Any]]:
    out: dict[Any, list[Any]] = {}
    for member in _members(union):
        for value in _literal_values(member, key):
            out.setdefault(value, []).append(member)
    return out


def _check_items(items: Any, union: Any, key: str, default: Any, prefix: str) -> None:
    if not isinstance(items, list):
        raise Rejected(f"Invalid type for '{prefix}': expected an array, but got {_got(items)} instead.", prefix, "invalid_type")
    table = _by_key(union, key)
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        if not isinstance(item, dict):
            raise Rejected(f"Invalid type for '{where}': expected an object, but got {_got(item)} instead.", where, "invalid_type")
        tag = item.get(key, default)
        candidates = table.get(tag, [])
        if not candidates:
            raise Rejected(
                f"Invalid value: {tag!r}. Supported values are: {', '.join(repr(k) for k in table)}.",
                f"{where}.{key}", "invalid_value",
            )
        first: Rejected | None = None
        for member in candidates:
            try:
                _check(member, item, where)
                break
            except Rejected as rej:
                first = first or rej
        else:
            assert first is not None
            raise first


def _union_of_list(hint: Any) -> Any:
    """The item union of `Iterable[Union[...]]` (inside Required/Union[str, ...] wrappers)."""
    for arg in [hint, *typing.get_args(hint)]:
        origin = typing.get_origin(arg)
        if origin in (collections.abc.Iterable, list):
            return typing.get_args(arg)[0]
        if origin in (typing_extensions.Required, typing_extensions.NotRequired, Union):
            found = _union_of_list(arg) if arg is not hint else None
            if found is not None:
                return found
    return None


def _check_body(params: Any, body: dict[str, Any], lists: dict[str, tuple[str, Any]]) -> None:
    hints = typing.get_type_hints(params, include_extras=True)
    rest = {k: v for k, v in body.items() if k not in lists}
    for name in lists:
        if name in body and name in hints and typing.get_origin(hints[name]) is typing_extensions.Required:
            rest[name] = []  # checked item by item below
    _check(params, rest, "")
    for name, (key, default) in lists.items():
        value = body.get(name)
        if value is None or isinstance(value, str):
            if name in body and value is None:
                raise Rejected(f"Invalid type for '{name}': expected an array, but got null instead.", name, "invalid_type")
            continue
        _check_items(value, _union_of_list(hints[name]), key, default, name)


def check_responses(body: dict[str, Any]) -> None:
    """Raise Rejected when `body` is not a ResponseCreateParamsStreaming (or non-streaming) body."""
    from openai.types.responses import response_create_params as p

    params = p.ResponseCreateParamsStreaming if body.get("stream") else p.ResponseCreateParamsNonStreaming
    _check_body(params, body, {"input": ("type", "message"), "tools": ("type", None)})


def check_chat(body: dict[str, Any]) -> None:
    """Raise Rejected when `body` is not a CompletionCreateParamsStreaming (or non-streaming) body."""
    from openai.types.chat import completion_create_params as p

    params = p.CompletionCreateParamsStreaming if body.get("stream") else p.CompletionCreateParamsNonStreaming
    _check_body(params, body, {"messages": ("role", None), "tools": ("type", None)})


def warm() -> None:
    """Build the adapters of the common item types once (a few seconds on a loaded machine), so the
    first request of a test run is not the one that waits for them."""
    user = {"role": "user", "content": [{"type": "input_text", "text": "x"}]}
    tool = {"type": "function", "name": "f", "parameters": {}, "strict": False}
    items = [user, {"role": "assistant", "content": "x"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "x"}, {"type": "item_reference", "id": "x"},
             {"type": "reasoning", "id": "rs_x", "summary": []}]
    check_responses({"model": "m", "stream": True, "input": items, "tools": [tool]})
    check_chat({"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}],
                "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]})
