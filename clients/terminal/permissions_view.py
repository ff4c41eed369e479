"""Permission rules in the terminal (docs/terminal.md): where an "Always allow" rule goes, and
`/permissions` (list, `/permissions rm N`).

An approval's keys: `w` always for this session, `f` always in this folder (the workspace's
rules in the state home), `u` always for the user (the user settings file); the server writes
the call's narrowest rule there (`ApproveResult.scope`, docs/protocol.md "Permission rules").
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from .. import protocol as wire
from ..model.visible_text import visible
from .render import Line

ALWAYS_FOLDER = "Always allow (folder)"
ALWAYS_USER = "Always allow (user)"
# The question's keys: "always" then where the rule is kept.
KEYS = "[a]llow / al[w]ays (session / [f]older / [u]ser) / [d]eny / [r]eason"
# key -> answer title, for the interactive view and `-p`.
ANSWER_KEYS = {"a": wire.ALLOW, "y": wire.ALLOW, "w": wire.ALWAYS_ALLOW, "f": ALWAYS_FOLDER, "u": ALWAYS_USER,
               "d": wire.DENY, "n": wire.DENY}
_SCOPES: dict[str, wire.RuleScope] = {wire.ALWAYS_ALLOW: "session", ALWAYS_FOLDER: "workspace", ALWAYS_USER: "user"}
SAID = {wire.ALWAYS_ALLOW: "  always allowed (this session)", ALWAYS_FOLDER: "  always allowed in this folder",
        ALWAYS_USER: "  always allowed, for you everywhere"}
USAGE = "/permissions rm N removes rule N"
# Where a rule is kept, in the words of the approval's keys.
WHERE = {"session": "this session", "workspace": "this folder", "user": "you, everywhere", "project": "the project's file"}


def approve_result(title: str | None, reason: str | None) -> wire.ApproveResult:
    """The answer to `shiro/approve` for the key's title (None: dismissed, a deny)."""
    scope = _SCOPES.get(title or "")
    if scope is not None:
        return wire.ApproveResult(decision="always", scope=scope if scope != "session" else None)
    if title == wire.ALLOW:
        return wire.ApproveResult(decision="allow")
    return wire.ApproveResult(decision="deny", reason=reason or None)


def rule_lines(result: dict[str, Any]) -> list[Line]:
    rules = [r for r in result.get("rules") or [] if isinstance(r, dict)]
    if not rules:
        return [[("dim", "no permission rules: an approval's w/f/u (always) adds one")]]
    width = len(str(len(rules)))
    colour = {"allow": "green", "ask": "yellow", "deny": "red"}
    out: list[Line] = []
    for number, rule in enumerate(rules, 1):
        decision = str(rule.get("decision", ""))
        scope = str(rule.get("scope", ""))
        out.append([("dim", f"  {number:>{width}}  "), (colour.get(decision, ""), f"{decision:<5}  "),
                    ("", visible(str(rule.get("rule", "")))), ("dim", f"  ({WHERE.get(scope, scope)})")])
    out.append([("dim", USAGE)])
    for name, key in (("your rules", "userFile"), ("this folder's", "workspaceFile")):
        if result.get(key):
            out.append([("dim", f"  {name}: {visible(str(result[key]))}")])
    return out


async def run(command: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]], arg: str) -> list[Line]:
    """`/permissions [rm N]`: the lines to show."""
    listed = await command(wire.PERMISSIONS, {})
    words = arg.split()
    if not words:
        return rule_lines(listed)
    rules = [r for r in listed.get("rules") or [] if isinstance(r, dict)]
    if words[0] not in ("rm", "remove", "del") or len(words) != 2 or not words[1].isdigit() \
            or not 1 <= int(words[1]) <= len(rules):
        return [[("yellow", f"usage: {USAGE}" + (f" (1 to {len(rules)})" if rules else ""))]]
    rule = rules[int(words[1]) - 1]
    args = {"rule": rule["rule"], "scope": rule["scope"], "decision": rule["decision"]}
    removed = (await command(wire.REMOVE_PERMISSION, args)).get("removed")
    shown = visible(str(rule["rule"]))
    if not removed:
        return [[("yellow", f"{shown} was not there any more")], *rule_lines(await command(wire.PERMISSIONS, {}))]
    return [[("green", f"removed {rule['decision']} {shown} ({WHERE.get(rule['scope'], rule['scope'])})")]]
