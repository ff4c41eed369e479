"""Finding and tidying saved sessions end to end (docs/protocol.md, "Sessions"): search
(`shiro.sessions {query}`), rename, delete, export, through the real server over stdio, with real
files, the real session index and its search table, the real checkpoint store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest
from pygls.exceptions import JsonRpcException

from shiro_neko.state import session_search
from shiro_neko.state.paths import workspace_key
from shiro_neko.state.session_record import decode_record
from tests.fake_provider import Call, Reply
from tests.support.lsp import Harness, start_server, stop

REFUSED = -32803


def database(home: Path) -> Path:
    return home / "sessions" / "index" / "sessions.sqlite3"


async def search(h: Harness, query: str, **extra: Any) -> list[dict[str, Any]]:
    return list((await h.command("shiro.sessions", {"query": query, **extra}))["sessions"])


async def refused(h: Harness, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await h.command(name, args)
    assert caught.value.code == REFUSED, caught.value
    return str(caught.value.message)


async def one_session(h: Harness, prompt: str, answer: str) -> str:
    """A saved session of one turn, left for a new one (so it is no longer this window's current)."""
    h.fake.script(Reply(text=answer))
    sid = (await h.chat(prompt))["sessionId"]
    await h.command("shiro.save")
    await h.command("shiro.newSession")
    return str(sid)


async def test_search_finds_old_sessions_and_another_servers_save(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    old = await one_session(a, "why does the zebra parser choke on tabs?", "The tokenizer treats a tab as two columns.")
    await stop(a)

    a = await start_server(tmp_path, fake, workspace)  # a later server: the session is an old one
    b = await start_server(tmp_path, fake, workspace, "neovim")
    try:
        found = await search(a, "zebra")
        assert [s["id"] for s in found] == [old]
        assert "zebra" in found[0]["snippet"] and found[0]["title"] == "why does the zebra parser choke on tabs?"
        # The answer's words too, whatever their case and accents; the last word is a prefix.
        assert [s["id"] for s in await search(a, "TOKENIZER colu")] == [old]
        assert await search(a, "zebra giraffe") == []  # every word must be there

        fake.script(Reply(text="Deploy the quokka service with the blue-green script."))
        theirs = (await b.chat("how do I roll out quokka?"))["sessionId"]
        await b.command("shiro.save")
        found = await search(a, "quokka")
        assert [s["id"] for s in found] == [theirs] and "quokka" in found[0]["snippet"].lower()
        # The listing's short ids are the shortest unique prefixes, 8 characters at least.
        listed = (await a.command("shiro.sessions"))["sessions"]
        ids = [s["id"] for s in listed]
        for row in listed:
            short = row["shortId"]
            assert len(short) >= 8 and row["id"].startswith(short)
            assert not any(other.startswith(short) for other in ids if other != row["id"])
            assert short == row["id"][:8] or any(other.startswith(short[:-1]) for other in ids if other != row["id"])
    finally:
        await stop(a)
        await stop(b)


QUERIES = ['"', '""', '"zebra', 'zebra"', "*", "zebra*", "OR", "zebra OR", "OR zebra", "-", "-zebra", "zebra -tabs",
           "NOT", "AND", "NEAR(zebra tabs)", "body:zebra", "{body}:x", "^zebra", "(", ")", "zebra + tabs", "'", "\\",
           "%", "_", "zebra'; DROP TABLE sessions; --", "\x00", "🦓"]


async def test_query_syntax_is_never_fts5_syntax(harness):
    sid = await one_session(harness, "the zebra parser and the tabs", "fixed the zebra tokenizer")
    for query in QUERIES:
        rows = await search(harness, query)  # no error, whatever the text
        assert all(r["id"] == sid for r in rows), query
    # Quotes, operators and column names are only the words they hold.
    for query in ('"zebra', 'zebra"', "zebra*", "-zebra", "(zebra)", "^zebra", "zebra + tabs", "{zebra}"):
        assert [r["id"] for r in await search(harness, query)] == [sid], query
    for query in ("zebra OR giraffe", "NEAR(zebra giraffe)", "body:zebra", "zebra NOT parser"):
        assert await search(harness, query) == [], query  # OR, NEAR, NOT, `body:` are words here
    assert (await harness.command("shiro.sessions", {"query": "   "}))["sessions"][0]["id"] == sid  # blank: the listing
    with pytest.raises(JsonRpcException):
        await harness.command("shiro.sessions", {"query": "x" * 5000})
    assert database(harness.home).exists()
    conn = sqlite3.connect(database(harness.home))
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1  # the injection attempt did nothing
    conn.close()


async def test_rename_shows_everywhere_and_is_refused_for_a_session_open_elsewhere(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    b = await start_server(tmp_path, fake, workspace, "neovim")
    try:
        saved = await one_session(a, "first prompt about caching", "ok")
        short = saved[:13]
        renamed = await a.command("shiro.renameSession", {"id": short, "title": "  Cache\n work   "})
        assert renamed == {"id": saved, "title": "Cache work"}
        row = (await a.command("shiro.sessions"))["sessions"][0]
        assert row["id"] == saved and row["title"] == "Cache work"
        record = json.loads((a.home / "sessions" / f"{saved}.json").read_text())
        assert record["title"] == "Cache work" and len(record["messages"]) >= 2
        assert [r["id"] for r in await search(b, "cache work")] == [saved]  # the title is searched too

        # The current session of this window: renamed in memory and on disk.
        fake.script(Reply(text="sure"))
        current = (await a.chat("second prompt"))["sessionId"]
        await a.command("shiro.renameSession", {"id": current, "title": "Named while open"})
        fake.script(Reply(text="more"))
        await a.chat("third prompt")
        await a.command("shiro.save")
        assert json.loads((a.home / "sessions" / f"{current}.json").read_text())["title"] == "Named while open"

        # Another window writes it: its next save would put its own title back.
        message = await refused(b, "shiro.renameSession", {"id": current, "title": "stolen"})
        assert "open in another shiro-neko window" in message and current[:8] in message
        with pytest.raises(JsonRpcException):
            await a.command("shiro.renameSession", {"id": saved, "title": " \n "})
    finally:
        await stop(a)
        await stop(b)


def _refs(home: Path, workspace: Path) -> str:
    git_dir = home / "checkpoints" / workspace_key(workspace) / "git"
    return subprocess.run(["git", "--git-dir", str(git_dir), "for-each-ref", "--format=%(refname)"],
                          capture_output=True, text=True, check=True).stdout


async def test_delete_takes_the_record_its_search_rows_and_checkpoints_and_refuses_open_sessions(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    b = await start_server(tmp_path, fake, workspace, "neovim")
    try:
        fake.script(Reply(calls=[Call("run_command", {"command": "echo made > made.txt"})]), Reply(text="made the walrus file"))
        doomed = (await a.chat("make a walrus file"))["sessionId"]
        await a.command("shiro.save")
        assert (await a.command("shiro.checkpoints"))["checkpoints"]
        assert f"refs/sessions/{doomed}" in _refs(a.home, workspace)

        # The current session of this window, and one another window writes: refused, kept.
        message = await refused(a, "shiro.deleteSession", {"id": doomed})
        assert "open in this window" in message
        fake.script(Reply(text="b's answer"))
        theirs = (await b.chat("b walrus question"))["sessionId"]
        await b.command("shiro.save")
        message = await refused(a, "shiro.deleteSession", {"id": theirs})
        assert "open in another shiro-neko window" in message and theirs[:8] in message
        assert (b.home / "sessions" / f"{theirs}.json").exists()

        await a.command("shiro.newSession")
        assert await a.command("shiro.deleteSession", {"id": doomed[:13]}) == {"deleted": True}
        assert not (a.home / "sessions" / f"{doomed}.json").exists()
        assert doomed not in {s["id"] for s in (await a.command("shiro.sessions"))["sessions"]}
        assert [s["id"] for s in await search(a, "walrus")] == [theirs]
        assert f"refs/sessions/{doomed}" not in _refs(a.home, workspace)
        conn = sqlite3.connect(database(a.home))
        assert conn.execute("SELECT count(*) FROM search_sessions WHERE id = ?", (doomed,)).fetchone()[0] == 0
        conn.close()
        with pytest.raises(JsonRpcException) as caught:
            await a.command("shiro.deleteSession", {"id": doomed})
        assert "no session" in caught.value.message
        # b let go of it: now it can be deleted from a.
        await b.command("shiro.newSession")
        fake.script(Reply(text="b again"))
        await b.chat("another")
        assert await a.command("shiro.deleteSession", {"id": theirs}) == {"deleted": True}
        assert await search(b, "walrus") == []
    finally:
        await stop(a)
        await stop(b)


async def test_export_is_the_dialogue_in_markdown_without_outputs_context_or_secrets(harness):
    harness.fake.script(
        Reply(calls=[Call("run_command", {"command": "echo OUTPUT-MARKER-91 && GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz012345 true"})]),
        Reply(text="I ran it; the **build** passes."),
    )
    sid = (await harness.chat("please run the build"))["sessionId"]
    exported = (await harness.command("shiro.exportSession", {"id": sid[:13], "format": "markdown"}))["text"]
    assert exported.startswith("# please run the build\n")
    assert f"- Session: `{sid}`" in exported
    assert "## User\n\nplease run the build" in exported
    assert "## Assistant" in exported and "I ran it; the **build** passes." in exported
    assert "> `run_command` echo OUTPUT-MARKER-91" in exported  # the call, folded to one line
    assert exported.count("OUTPUT-MARKER-91") == 1  # its output is not there
    assert "ghp_abcdefghijklmnopqrstuvwxyz012345" not in exported and "[redacted]" in exported
    assert "sk-test-not-a-real-key" not in exported
    await harness.command("shiro.save")  # exported from memory; the record is read from disk below
    record = json.loads((harness.home / "sessions" / f"{sid}.json").read_text())
    context = [m for m in record["messages"] if m.get("context")]
    assert context, "the record holds context messages to leave out"
    for message in context:
        for line in message["content"][0]["text"].splitlines():
            if len(line) > 20:
                assert line not in exported
    with pytest.raises(JsonRpcException):
        await harness.command("shiro.exportSession", {"id": sid, "format": "html"})


def _consistent(home: Path) -> dict[str, int]:
    """Every session file's searchable texts are in the search table, and nothing else is."""
    conn = sqlite3.connect(database(home))
    try:
        conn.execute("INSERT INTO search (search, rank) VALUES ('integrity-check', 0)")  # FTS5's own check
        indexed = {sid: (num, count) for num, sid, count in conn.execute("SELECT num, id, count FROM search_sessions")}
        files = sorted((home / "sessions").glob("*.json"))
        assert set(indexed) == {f.stem for f in files}
        for path in files:
            record = decode_record(path.read_bytes())
            texts = session_search.message_texts(record.messages)
            num, count = indexed[record.id]
            assert count == len(texts), record.id
            base = num << session_search.SEQ_BITS
            rows = conn.execute("SELECT body FROM search WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
                                (base + 1, base + session_search.MAX_MESSAGES)).fetchall()
            assert [r[0] for r in rows] == texts, record.id
        total = conn.execute("SELECT count(*) FROM search").fetchone()[0]
        assert total == sum(count + 1 for _, count in indexed.values())  # + each title
        return {sid: count for sid, (_, count) in indexed.items()}
    finally:
        conn.close()


async def test_two_servers_saving_at_once_keep_the_search_table_consistent(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    b = await start_server(tmp_path, fake, workspace, "neovim")
    try:
        fake.script(*[Reply(text=f"answer number {i}") for i in range(16)])

        async def turns(h: Harness, who: str) -> None:
            for i in range(4):
                await h.chat(f"{who} asks about kiwi{who}{i}")
                if i == 1:
                    await h.command("shiro.newSession")

        await asyncio.gather(turns(a, "a"), turns(b, "b"))
        await asyncio.gather(a.command("shiro.save"), b.command("shiro.save"))
        counts = _consistent(a.home)
        assert sorted(counts.values()) == [4, 4, 4, 4]
        for who in "ab":
            for i in range(4):
                assert len(await search(a, f"kiwi{who}{i}")) == 1
    finally:
        await stop(a)
        await stop(b)


async def test_a_damaged_search_table_is_rebuilt_from_the_session_files(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace)
    sid = await one_session(h, "the narwhal migration", "narwhal done")
    await one_session(h, "something else", "other")
    await stop(h)
    conn = sqlite3.connect(database(h.home))
    # Garbage in the search table's index pages (SQLite's page check at open passes: the pages
    # are well-formed rows; FTS5 finds the doclists unreadable).
    conn.execute("UPDATE search_data SET block = randomblob(length(block)) WHERE id > 10")
    conn.commit()
    conn.close()

    h = await start_server(tmp_path, fake, workspace)
    try:
        assert [s["id"] for s in await search(h, "narwhal")] == [sid]
        aside = [p.name for p in database(h.home).parent.iterdir() if ".corrupt-" in p.name]
        assert aside and aside[0].startswith("sessions.sqlite3.corrupt-")
        _consistent(h.home)
    finally:
        await stop(h)


async def test_an_index_of_the_earlier_schema_gets_its_text_at_the_first_search(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace)
    sid = await one_session(h, "the ocelot cache", "ocelot fixed")
    await stop(h)
    conn = sqlite3.connect(database(h.home))
    conn.executescript("DROP TABLE search; DROP TABLE search_sessions; PRAGMA user_version = 1;")
    conn.close()
    h = await start_server(tmp_path, fake, workspace)
    try:
        assert [s["id"] for s in await search(h, "ocelot")] == [sid]
        _consistent(h.home)
    finally:
        await stop(h)


def test_payload_round_trip() -> None:
    from shiro_neko import protocol as wire

    row = wire.SessionSummary(id="i", title="t", created_at="c", updated_at="u", message_count=2, cwd="/w",
                              short_id="i", snippet="a … b")
    data = msgspec.json.encode(row)
    assert msgspec.json.decode(data, type=wire.SessionSummary) == row
    assert json.loads(data)["shortId"] == "i" and json.loads(data)["snippet"] == "a … b"
    args = wire.decode_args(({"id": "abc", "title": "x"},), wire.RenameSessionArgs)
    assert args.id == "abc" and args.title == "x"
    with pytest.raises(ValueError):
        wire.decode_args(({"id": "abc", "format": "pdf"},), wire.ExportSessionArgs)
