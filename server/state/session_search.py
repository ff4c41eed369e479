"""Full-text search over the sessions' text: an FTS5 table in the session index's database.

The table lives in `sessions/index/sessions.sqlite3` beside the listing rows
(state/session_index.py), so a save writes the record's text in the same write transaction as
its row: two processes saving at once (two windows) keep both in step under SQLite's write lock,
and a database found corrupt (its FTS pages included) is set aside and rebuilt from the session
files like the rest of the index.

- `search`: FTS5 (unicode61, diacritics folded), one row per indexed message (the user's and the
  assistant's text: what a person would search for; tool output and context messages stay out)
  and one for the title. Row ids are `num << 20 | seq`: a session's rows are one rowid range, so
  replacing them is a range delete (FTS5 reads rowid ranges off its content table) and a match
  names its session with a shift.
- `search_sessions`: per session, its `num`, the title as indexed, how many messages are indexed
  and a digest of their texts. An autosave usually appends: when the digest of the record's first
  `count` texts is the stored one, only the new messages are inserted; anything else (a rewind, a
  /compact) replaces the session's rows.

A session row of the index with no `search_sessions` row (the index of an earlier version, or
rows imported from its JSON index) has its text read from its file by `fill_missing`, which a
search runs first.

Queries are user text, never FTS5 syntax: every whitespace-separated word is quoted (a `"` inside
doubled), so `"`, `*`, `OR`, `NEAR`, `-` and `:` are searched as the words they contain, and the
words are ANDed; the last one is a prefix (the picker searches while the user types).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..model.transcript import AssistantMessage, Message, TextPart, UserMessage

SCHEMA = """
CREATE TABLE IF NOT EXISTS search_sessions (
    num    INTEGER PRIMARY KEY,   -- the session's rows in `search` are num << 20 | seq
    id     TEXT NOT NULL UNIQUE,
    title  TEXT NOT NULL,         -- as indexed (row seq 0)
    count  INTEGER NOT NULL,      -- messages indexed (rows seq 1..count)
    digest BLOB NOT NULL          -- of those messages' texts: tells an append from a rewrite
);
CREATE VIRTUAL TABLE IF NOT EXISTS search USING fts5(body, tokenize = 'unicode61 remove_diacritics 2', prefix = '2')
"""
TABLES = {"search_sessions": ("num", "id", "title", "count", "digest"), "search": ("body",)}

SEQ_BITS = 20
MAX_MESSAGES = (1 << SEQ_BITS) - 1  # texts past this many in one session are not indexed
TEXT_MAX = 32 * 1024  # characters of one message indexed: a pasted log is found by its start
QUERY_MAX_WORDS = 16
SNIPPET_TOKENS = 16
_WORD = re.compile(r"\w")


def message_texts(messages: Sequence[Message]) -> list[str]:
    """The searchable text of a transcript: each user prompt and each assistant answer (context
    messages, reasoning, tool calls and their output left out), capped per message."""
    texts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if message.context:
                continue
            text = "\n".join(p.text for p in message.content if isinstance(p, TextPart))
        elif isinstance(message, AssistantMessage):
            text = "".join(p.text for p in message.content if isinstance(p, TextPart))
        else:
            continue
        if text.strip():
            texts.append(text[:TEXT_MAX])
            if len(texts) == MAX_MESSAGES:
                break
    return texts


def _hash_item(h: "hashlib.blake2b", text: str) -> None:
    h.update(text.encode("utf-8", "surrogatepass"))
    h.update(b"\0")


def update(conn: sqlite3.Connection, session_id: str, title: str, texts: list[str]) -> None:
    """Bring one session's rows in step with its record (inside the caller's write transaction)."""
    row = conn.execute("SELECT num, title, count, digest FROM search_sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        num = int(conn.execute(
            "INSERT INTO search_sessions (id, title, count, digest) VALUES (?, '', 0, x'') RETURNING num",
            (session_id,)).fetchone()[0])
        old_title, count, digest = None, 0, b""
    else:
        num, old_title, count, digest = int(row[0]), row[1], int(row[2]), bytes(row[3])
    base = num << SEQ_BITS
    h = hashlib.blake2b(digest_size=16)
    start = 0
    if 0 < count <= len(texts):
        for text in texts[:count]:
            _hash_item(h, text)
        if h.digest() == digest:
            start = count  # an append: the rows indexed so far are the record's first texts
    if start == 0:
        if count:
            conn.execute("DELETE FROM search WHERE rowid BETWEEN ? AND ?", (base + 1, base + MAX_MESSAGES))
        h = hashlib.blake2b(digest_size=16)
    new = texts[start:]
    for text in new:
        _hash_item(h, text)
    if new:
        conn.executemany("INSERT INTO search (rowid, body) VALUES (?, ?)",
                         ((base + start + 1 + i, text) for i, text in enumerate(new)))
    if title != old_title:
        if old_title is not None:
            conn.execute("DELETE FROM search WHERE rowid = ?", (base,))
        conn.execute("INSERT INTO search (rowid, body) VALUES (?, ?)", (base, title))
    conn.execute("UPDATE search_sessions SET title = ?, count = ?, digest = ? WHERE num = ?",
                 (title, len(texts), h.digest(), num))


def drop(conn: sqlite3.Connection, session_id: str) -> None:
    """Remove one session's rows (its file is gone or corrupt)."""
    row = conn.execute("DELETE FROM search_sessions WHERE id = ? RETURNING num", (session_id,)).fetchone()
    if row is not None:
        base = int(row[0]) << SEQ_BITS
        conn.execute("DELETE FROM search WHERE rowid BETWEEN ? AND ?", (base, base + MAX_MESSAGES))


def missing(conn: sqlite3.Connection, limit: int = -1) -> list[str]:
    """Ids of good index rows whose text is not indexed yet (at most `limit`; -1: all)."""
    return [r[0] for r in conn.execute(
        "SELECT e.id FROM sessions e WHERE e.corrupt IS NULL "
        "AND NOT EXISTS (SELECT 1 FROM search_sessions s WHERE s.id = e.id) LIMIT ?", (limit,))]


def fts_query(text: str) -> str | None:
    """The FTS5 query for a user's words (module docstring); None when they hold no word."""
    words = [w for w in text.split() if _WORD.search(w)][:QUERY_MAX_WORDS]
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


_SELECT = (
    "SELECT e.id, e.title, e.created_at, e.updated_at, e.updated_ts, e.message_count, e.cwd, e.size, e.mtime_ns, s.num "
    "FROM sessions e JOIN search_sessions s ON s.id = e.id "
    "WHERE e.workspace_key = ? AND e.corrupt IS NULL "
    "AND s.num IN (SELECT rowid >> 20 FROM search WHERE search MATCH ?) "
    "ORDER BY e.updated_ts DESC, e.id DESC LIMIT ?"
)


def matching(conn: sqlite3.Connection, key: str, query: str, limit: int) -> list[tuple[Any, ...]]:
    """Rows (the index's listing columns, then `num`) of the `limit` most recently updated
    sessions of workspace `key` whose text matches the FTS5 `query`."""
    return conn.execute(_SELECT, (key, query, limit)).fetchall()


def snippets(conn: sqlite3.Connection, query: str, nums: Iterable[int]) -> dict[int, str]:
    """The best-matching passage of each session (`num`), on one line: a message's, else the title's."""
    found: dict[int, str] = {}
    for num in nums:
        base = num << SEQ_BITS
        row = conn.execute(
            "SELECT snippet(search, 0, '', '', '…', ?) FROM search WHERE search MATCH ? "
            "AND rowid BETWEEN ? AND ? ORDER BY rowid = ?, rank LIMIT 1",
            (SNIPPET_TOKENS, query, base, base + MAX_MESSAGES, base)).fetchone()
        if row is not None:
            found[num] = " ".join(str(row[0]).split())
    return found
