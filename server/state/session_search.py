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
doubled), so `"`, `*`, `OR`, `NEAR`, `-` and `:` are searched as the words they contain (`a-b` as
the phrase "a b"); the last one is a prefix (the picker searches while the user types). A session
matches when every word is somewhere in it, not necessarily in one message: each word's sessions
are found apart and intersected.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import unicodedata
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


def fts_words(text: str) -> list[str]:
    """Each of a user's words as an FTS5 string (module docstring); [] when they hold no word."""
    words = [w for w in text.split() if _WORD.search(w)][:QUERY_MAX_WORDS]
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    if quoted:
        quoted[-1] += "*"
    return quoted


_SESSIONS_OF_WORD = "SELECT rowid >> 20 FROM search WHERE search MATCH ?"
_NEWEST_FIRST = (
    "SELECT s.num, e.id FROM sessions e JOIN search_sessions s ON s.id = e.id "
    "WHERE e.workspace_key = ? ORDER BY e.updated_ts DESC, e.id DESC"
)
_ROWS = ("SELECT e.id, e.title, e.created_at, e.updated_at, e.updated_ts, e.message_count, e.cwd, e.size, "
         "e.mtime_ns FROM sessions e WHERE e.id IN ({ids})")


def matching(conn: sqlite3.Connection, key: str, words: list[str], limit: int) -> list[tuple[Any, ...]]:
    """Rows (the index's listing columns, then `num`) of the `limit` most recently updated
    sessions of workspace `key` whose text holds every one of `words` (fts_words).

    Two steps rather than one join: the sessions holding every word (FTS5, each word's set
    intersected in SQLite), then the workspace's sessions walked newest first (a covering
    index) until `limit` of them are in that set. One query joining both made SQLite probe the
    match list once per row of the workspace: ~50 ms for a rare word at 10,000 sessions
    (bench/session_search.py)."""
    nums = {int(r[0]) for r in conn.execute(" INTERSECT ".join([_SESSIONS_OF_WORD] * len(words)), words)}
    if not nums:
        return []
    picked: dict[str, int] = {}
    cursor = conn.execute(_NEWEST_FIRST, (key,))
    while len(picked) < limit:
        batch = cursor.fetchmany(256)
        if not batch:
            break
        picked.update((sid, num) for num, sid in batch if num in nums)
    cursor.close()
    chosen = list(picked.items())[:limit]
    rows = {r[0]: r for r in conn.execute(_ROWS.format(ids=", ".join("?" * len(chosen))), [sid for sid, _ in chosen])}
    return [(*rows[sid], num) for sid, num in chosen if sid in rows]


# Accented Latin letters as their base letter, one character for one (so a match's place in the
# folded text is its place in the original): what `remove_diacritics` lets FTS5 match.
_FOLD = {c: unicodedata.normalize("NFD", chr(c))[0] for c in range(0xC0, 0x250)
         if len(unicodedata.normalize("NFD", chr(c))) > 1}
SNIPPET_BEFORE, SNIPPET_AFTER = 60, 140  # characters around the first match
SNIPPET_SCAN = 2000  # messages of one session looked at for its snippet


def _pattern(words: list[str]) -> re.Pattern[str] | None:
    """Any token of the query in a text (the last word's last token as a prefix), case and
    accents aside."""
    tokens: list[str] = []
    for i, word in enumerate(words):
        found = re.findall(r"\w+", word[1:].rsplit('"', 1)[0].translate(_FOLD))
        tokens += [re.escape(t) + ("" if i == len(words) - 1 and j == len(found) - 1 else r"\b") for j, t in enumerate(found)]
    return re.compile(r"\b(?:" + "|".join(tokens) + ")", re.IGNORECASE) if tokens else None


def _cut(text: str, at: int) -> str:
    start, end = max(0, at - SNIPPET_BEFORE), min(len(text), at + SNIPPET_AFTER)
    if start > 0:
        space = text.find(" ", start, at)
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", at, end)
        end = space if space > at else end
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")


def snippets(conn: sqlite3.Connection, words: list[str], nums: Iterable[int]) -> dict[int, str]:
    """The passage of each session (`num`) around the first place its text names a word of the
    query, on one line: in the message naming the most of them (the earliest of those), else
    the title. Found here rather than with FTS5's snippet(): that one is a MATCH per session, and
    a prefix MATCH limited to a rowid range re-reads every term of the prefix each time (~4 ms a
    session for `test*` at 10,000 sessions)."""
    pattern = _pattern(words)
    found: dict[int, str] = {}
    if pattern is None:
        return found
    for num in nums:
        base = num << SEQ_BITS
        best: tuple[int, str, int] | None = None  # (distinct tokens, text, where)
        title = ""
        for rowid, body in conn.execute("SELECT rowid, body FROM search WHERE rowid BETWEEN ? AND ? LIMIT ?",
                                        (base, base + MAX_MESSAGES, SNIPPET_SCAN)):
            if rowid == base:
                title = body
                continue
            folded = body.translate(_FOLD)
            hits = {m.group().lower() for m in pattern.finditer(folded)}
            if hits and (best is None or len(hits) > best[0]):
                first = pattern.search(folded)
                best = (len(hits), body, first.start() if first else 0)
        if best is not None:
            found[num] = _cut(best[1], best[2])
        elif title:
            found[num] = " ".join(title.split())
    return found
