"""A small MCP server written with the official SDK, for the fault cases of issue 13.

    python fault_server.py [--crash-at-start] [--garbage] [--slow-start S] [--ignore-eof]
                           [--ignore-term] [--pidfile PATH] [--bad-schema] [--helpers PATH]

Tools: echo(text), crash() (the process dies mid-call), hang() (never answers), fail() (an isError
result), picture() (an image), env(name) (one environment variable), big(size) (a text answer of
`size` bytes), helper(how, pidfile) (starts a detached `sleep` that would outlive the server: `how`
is "setsid" or "double-fork"; its pid goes to `pidfile`), write(path, text) (writes a file: a tool
that changes something), peek(path) (reads one, marked readOnlyHint), and with --bad-schema a tool whose input
schema is not valid JSON Schema. --helpers PATH starts one helper of each kind at start (their pids
go to PATH).
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import subprocess
import sys
import time

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode()


ZOMBIE_LEADER = (
    "import ctypes, signal, threading, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "threading.Thread(target=time.sleep, args=(600,)).start()\n"
    "ctypes.CDLL(None).pthread_exit(None)\n"
)


def start_helper(how: str) -> int:
    """A `sleep` that leaves the server's session (setsid) or, on top, its parentage (a shell that
    starts it in the background with `setsid` and exits: the double fork of a daemon)."""
    quiet = subprocess.DEVNULL
    if how == "setsid":
        return subprocess.Popen(["sleep", "600"], start_new_session=True, stdin=quiet, stdout=quiet, stderr=quiet).pid
    if how == "zombie-leader":  # its own session, SIGTERM ignored, main thread ended: /proc reads Z
        return subprocess.Popen([sys.executable, "-c", ZOMBIE_LEADER], start_new_session=True,
                                stdin=quiet, stdout=quiet, stderr=quiet).pid
    script = "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!"
    return int(subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--crash-at-start", action="store_true")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--bad-schema", action="store_true")
    parser.add_argument("--pidfile")
    parser.add_argument("--helpers")
    opts = parser.parse_args()
    if opts.pidfile:
        with open(opts.pidfile, "a") as f:
            f.write(f"{os.getpid()}\n")
    if opts.helpers:
        pids = [start_helper("setsid"), start_helper("double-fork")]
        with open(opts.helpers, "a") as f:
            f.write("".join(f"{pid}\n" for pid in pids))
    if opts.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("fault server starting", file=sys.stderr, flush=True)
    if opts.crash_at_start:
        print("fatal: the fault server was told to crash at start", file=sys.stderr, flush=True)
        sys.exit(3)
    time.sleep(opts.slow_start)
    # stdio_server points fd 1 at stderr while serving; keep the real stdout to write garbage on.
    garbage_fd = os.dup(1)
    if opts.garbage:
        os.write(garbage_fd, b"this line is not JSON-RPC\n")

    tools = [
        types.Tool(name="echo", description="Echo the text back", input_schema={
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        types.Tool(name="crash", description="Die in the middle of the call", input_schema={"type": "object"}),
        types.Tool(name="hang", description="Never answer", input_schema={"type": "object"}),
        types.Tool(name="fail", description="Answer with an error result", input_schema={"type": "object"}),
        types.Tool(name="picture", description="Return an image", input_schema={"type": "object"}),
        types.Tool(name="env", description="One environment variable", input_schema={
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        types.Tool(name="big", description="A text answer of `size` bytes", input_schema={
            "type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}),
        types.Tool(name="helper", description="Start a detached helper", input_schema={
            "type": "object", "properties": {"how": {"type": "string"}, "pidfile": {"type": "string"}},
            "required": ["how", "pidfile"]}),
        types.Tool(name="write", description="Write text to a file", input_schema={
            "type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
            "required": ["path", "text"]}),
        types.Tool(name="peek", description="Read a file", annotations=types.ToolAnnotations(read_only_hint=True),
                   input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    ]
    if opts.bad_schema:
        tools.append(types.Tool(name="broken", description="Invalid schema", input_schema={
            "type": "object", "properties": {"x": {"type": "no-such-type"}}}))

    async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        if opts.garbage:
            os.write(garbage_fd, b"more garbage on stdout\n")
        if params.name == "echo":
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(args.get("text")))])
        if params.name == "crash":
            print("fault server: crashing mid-call as asked", file=sys.stderr, flush=True)
            os._exit(7)
        if params.name == "hang":
            await anyio.sleep(3600)
        if params.name == "fail":
            return types.CallToolResult(content=[types.TextContent(type="text", text="it went wrong on purpose")], is_error=True)
        if params.name == "picture":
            return types.CallToolResult(content=[
                types.TextContent(type="text", text="here is a picture"),
                types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            ])
        if params.name == "env":
            return types.CallToolResult(content=[types.TextContent(type="text", text=os.environ.get(str(args.get("name")), "<unset>"))])
        if params.name == "big":
            return types.CallToolResult(content=[types.TextContent(type="text", text="x" * int(args.get("size", 0)))])
        if params.name == "helper":
            pid = start_helper(str(args.get("how")))
            with open(str(args.get("pidfile")), "a") as f:
                f.write(f"{pid}\n")
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"helper {pid}")])
        if params.name == "write":
            with open(str(args.get("path")), "w") as f:
                f.write(str(args.get("text")))
            return types.CallToolResult(content=[types.TextContent(type="text", text="written")])
        if params.name == "peek":
            with open(str(args.get("path"))) as f:
                return types.CallToolResult(content=[types.TextContent(type="text", text=f.read())])
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"no tool {params.name}")], is_error=True)

    server = Server("fault-server", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
    if opts.ignore_eof:
        while True:  # a server that does not stop at the end of its input
            time.sleep(1)


if __name__ == "__main__":
    main()
