"""MCP configuration entries, tool names and result rendering (pure; no SDK, no process)."""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

import pytest

from shiro_neko.config import Settings, merge_settings
from shiro_neko.mcp.names import MAX_NAME, assign_names, plain_name
from shiro_neko.mcp.results import render_result
from shiro_neko.mcp.specs import SpecError, parse_servers, parse_spec, spec_from_acp


def test_stdio_and_http_entries() -> None:
    spec = parse_spec("git", {"command": "uvx", "args": ["mcp-server-git"], "env": {"T": "secret-1"}, "alwaysAllow": ["git_status"]})
    assert (spec.transport, spec.command, spec.args, spec.timeoutSeconds) == ("stdio", "uvx", ("mcp-server-git",), 60)
    http = parse_spec("web", {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer tok-123"}, "type": "http"})
    assert http.transport == "http" and http.headers == {"Authorization": "Bearer tok-123"}
    assert "secret-1" not in repr(spec) and "tok-123" not in repr(http) and "tok-123" not in str(http)
    assert sorted(http.secrets()) == ["Bearer tok-123"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({}, "give exactly one of `command` (stdio) or `url` (HTTP)"),
        ({"command": "a", "url": "http://x"}, "give exactly one of"),
        ({"command": " "}, "`command` is empty"),
        ({"url": "ftp://x"}, "`url` must start with http:// or https://"),
        ({"command": "a", "env": {"K": 1}}, "Expected `str`, got `int` - at `$.env[...]`"),
        ({"command": "a", "timeoutSeconds": 0}, "`timeoutSeconds` must be positive"),
        ({"command": "a", "type": "http"}, "does not match"),
        ("npx", "must be an object"),
    ],
)
def test_bad_entries_say_what_is_wrong(entry: object, message: str) -> None:
    with pytest.raises(SpecError, match="MCP server 'x'") as err:
        parse_spec("x", entry)
    assert message in str(err.value)


def test_one_bad_entry_fails_alone_and_values_are_never_quoted() -> None:
    specs, errors = parse_servers({"good": {"command": "a"}, "bad": {"command": "a", "env": {"K": ["s3cret"]}}}, "project")
    assert [s.name for s in specs] == ["good"] and specs[0].source == "project"
    assert "bad" in errors and "s3cret" not in errors["bad"]


def test_fingerprint_changes_with_any_field() -> None:
    a = parse_spec("a", {"command": "x"})
    assert a.fingerprint() == parse_spec("a", {"command": "x"}).fingerprint()
    assert a.fingerprint() != parse_spec("a", {"command": "x", "env": {"K": "v"}}).fingerprint()


def test_acp_entries() -> None:
    stdio = spec_from_acp({"name": "fs", "command": "npx", "args": ["srv"], "env": [{"name": "K", "value": "v"}]})
    assert (stdio.command, stdio.args, stdio.env) == ("npx", ("srv",), {"K": "v"})
    http = spec_from_acp({"type": "http", "name": "w", "url": "http://127.0.0.1:1/mcp", "headers": [{"name": "A", "value": "b"}]})
    assert http.transport == "http" and http.headers == {"A": "b"}
    with pytest.raises(SpecError):
        spec_from_acp({"name": "x", "command": "a", "env": "K=v"})


def test_setting_is_replaced_whole_and_not_dot_expanded() -> None:
    s = merge_settings(Settings(), {"mcpServers": {"a.b": {"command": "x", "env": {"A.B": "1"}}, "c": {"command": "y"}}})
    assert s.mcpServers == {"a.b": {"command": "x", "env": {"A.B": "1"}}, "c": {"command": "y"}}
    s = merge_settings(s, {"mcpServers": {"c": {"command": "y"}}})
    assert list(s.mcpServers) == ["c"]  # a removed server is gone, not merged back
    assert merge_settings(s, {"model": "m"}).mcpServers == {"c": {"command": "y"}}
    assert merge_settings(s, {"mcpServers": [1]}).mcpServers == {"c": {"command": "y"}}


def test_tool_names_follow_the_provider_rule() -> None:
    assert plain_name("my server", "get.time") == "mcp__my_server__get_time"
    long = assign_names([("s" * 40, "t" * 40)])[("s" * 40, "t" * 40)]
    assert len(long) == MAX_NAME
    pairs = [("a b", "x"), ("a_b", "x"), ("c", "y")]
    names = assign_names(pairs)
    assert names[("c", "y")] == "mcp__c__y"
    assert names[("a b", "x")] != names[("a_b", "x")]
    assert all(n.startswith("mcp__a_b__x_") and len(n) == len("mcp__a_b__x_") + 8 for n in (names[("a b", "x")], names[("a_b", "x")]))
    assert assign_names(list(reversed(pairs))) == names  # independent of start order
    import re

    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names.values())


def test_results_text_structured_images_and_errors() -> None:
    text = NS(type="text", text='{"a": 1}')
    output, is_error = render_result("s", "t", NS(content=[text], structured_content={"a": 1}, is_error=False))
    assert (output, is_error) == ('{"a": 1}', False)  # the structured copy is not said twice
    output, _ = render_result("s", "t", NS(content=[], structured_content={"b": 2}, is_error=False))
    assert output == '{"b": 2}'
    image = NS(type="image", data="aGVsbG8=", mime_type="image/png")
    blob = NS(type="resource", resource=NS(uri="file:///x.bin", blob="AAAA", mime_type=None))
    output, _ = render_result("s", "t", NS(content=[image, blob], structured_content=None, is_error=False))
    assert output == "[image image/png, 5 bytes - not shown]\n[resource file:///x.bin (binary, 3 bytes) - not shown]"
    output, is_error = render_result("srv", "tool", NS(content=[NS(type="text", text="nope")], structured_content=None, is_error=True))
    assert (output, is_error) == ("MCP tool 'tool' of server 'srv' failed: nope", True)
    output, _ = render_result("s", "t", NS(content=[NS(type="text", text="x" * 100_000)], structured_content=None, is_error=False))
    assert len(output) < 31_000 and "truncated" in output  # the same cap as our own tools


def test_results_go_once_in_the_official_servers_shapes() -> None:
    """server-filesystem's read_text_file and server-memory's read_graph answer a text block and the
    same content as structuredContent in their own wrapper: the model gets it once, as text."""
    file_text = "".join(f"line {k}: some text of a large source file\n" for k in range(3_500))  # ~150,000 characters
    read = NS(content=[NS(type="text", text=file_text)], structured_content={"content": file_text}, is_error=False)
    output, _ = render_result("filesystem", "read_text_file", read)
    assert output.count("line 17: some text") == 1  # once, not text plus the same text as JSON
    assert output.startswith("line 0: ") and "truncated" in output
    graph = {"entities": [{"name": "shiro", "entityType": "project", "observations": ["an editor agent"]}], "relations": []}
    dump = NS(content=[NS(type="text", text=json.dumps(graph, indent=2))], structured_content=graph, is_error=False)
    output, _ = render_result("memory", "read_graph", dump)
    assert output == json.dumps(graph, indent=2)
    # mcp-server-time (Python SDK) returns its JSON as text and as structured content: once.
    now = {"timezone": "Europe/Paris", "datetime": "2026-12-02T02:00:00+01:00", "is_dst": False}
    output, _ = render_result("time", "get_current_time", NS(content=[NS(type="text", text=json.dumps(now, indent=2))],
                                                             structured_content=now, is_error=False))
    assert output.count("Europe/Paris") == 1
    # Only when no text says anything does the structured content go, as JSON.
    output, _ = render_result("s", "t", NS(content=[NS(type="text", text="  ")], structured_content={"n": 1}, is_error=False))
    assert output.endswith('{"n": 1}')
