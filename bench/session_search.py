"""Full-text search over saved sessions (`shiro.sessions {query}`, state/session_search.py).

A home of `--count` sessions (default 10,000) in 4 workspaces, written as files, each with 2 to 20
messages of generated developer chat (prompts about failing tests, stack traces, reviews, builds;
answers with file names, commands and code words: ~110,000 messages in all at 10,000 sessions),
then:

- `first_list_in_server_ms`: the first `shiro.sessions` of a server on that home (it builds the
  index and the search table from the files); reported, not a target.
- `search_in_server_ms`: `shiro.sessions {query}` over LSP (bench/common/lsp_driver.py), each of
  QUERIES 15 times after one warm-up, all samples together (and per query). Target: median 50 ms.
- `index_update_per_save_ms`: what the search table costs a save: `session_search.update` timed
  inside `SessionStore.save` (the server's writer thread does the same) when a turn (a prompt and
  its answer) is appended to a session of the home, and to one of 1,000 messages; and the whole
  save beside it. Target: median 5 ms.
- `integrity_check_ms`: FTS5's full integrity check of that table, for the record: why no process
  runs it routinely (it holds the write lock that long); a damaged table shows itself as an error
  of a query and is rebuilt from the files then.

Run: python bench/session_search.py [--count 10000] [--quick]; writes bench/results/session_search.json.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "common"))
sys.path.insert(0, str(REPO))

from fake_child import FakeChild  # noqa: E402
from lsp_driver import Server, server_env  # noqa: E402
from stats import summary, write_result  # noqa: E402

import uuid_utils  # noqa: E402

from shiro_neko.model.transcript import AssistantMessage, Message, TextPart, ToolCallPart, ToolMessage, ToolResultPart, user_text  # noqa: E402
from shiro_neko.state import session_search  # noqa: E402
from shiro_neko.state.session_record import SessionRecord, encode_record, make_title  # noqa: E402
from shiro_neko.state.session_store import SessionStore  # noqa: E402

RESULTS = HERE / "results" / "session_search.json"

# Plausible developer chat, put together from parts (seeded: every run writes the same home).
FILES = ["src/pagination.py", "tests/test_pagination.py", "api/routes/users.ts", "web/components/Table.tsx",
         "internal/cache/lru.go", "Cargo.toml", "migrations/0042_add_index.sql", "docker-compose.yml",
         "scripts/release.sh", "lib/auth/session.rb", "pkg/queue/worker.go", "app/models/invoice.py",
         ".github/workflows/ci.yml", "src/parser/lexer.rs", "config/webpack.config.js", "README.md"]
ERRORS = ["KeyError: 'next_cursor'", "TypeError: Cannot read properties of undefined (reading 'map')",
          "panic: runtime error: index out of range [3] with length 3", "AssertionError: expected 20 rows, got 19",
          "error[E0502]: cannot borrow `buf` as mutable", "psycopg2.errors.DeadlockDetected", "ECONNREFUSED 127.0.0.1:5432",
          "segmentation fault (core dumped)", "ModuleNotFoundError: No module named 'yaml'", "timeout after 30000 ms",
          "java.lang.NullPointerException at InvoiceService.total", "401 Unauthorized from the token endpoint"]
TOPICS = ["pagination", "the flaky integration test", "the login redirect", "rate limiting", "the CSV export",
          "dark mode", "the search endpoint", "memory leak in the worker", "the Docker build", "database migrations",
          "websocket reconnects", "the release script", "caching headers", "the onboarding wizard", "timezone handling",
          "the invoice totals", "GraphQL resolvers", "the retry backoff", "feature flags", "the PDF renderer"]
ASKS = ["why does {topic} break when {cond}?", "can you look at {file}? I think {topic} is wrong there",
        "the CI fails with {err} in {file}", "refactor {topic} so it no longer {verb} on every request",
        "write a test for {topic} that covers {cond}", "{err} again after my change to {file}, any idea?",
        "review my change to {file} before I open the PR", "how should {topic} behave when {cond}?",
        "make {topic} configurable from the settings", "explain what {file} does and why it {verb}"]
CONDS = ["the last page is empty", "the user is logged out", "two requests race", "the cache is cold",
         "the input has unicode", "the server restarts mid-request", "the list has exactly 20 items",
         "the token expired", "the file is larger than 10 MB", "daylight saving time starts"]
VERBS = ["allocates", "queries the database", "re-renders", "blocks the event loop", "retries", "logs the secret",
         "opens a new connection", "parses the whole file"]
ANSWERS = ["The problem is in {file}: {topic} uses an off-by-one bound, so when {cond} the loop stops early. "
           "I changed the comparison and added a regression test; `npm test` passes now.",
           "{err} comes from {file}, where the code assumes the key is always present. "
           "I made it optional and return an empty page instead; the fixture in tests/conftest.py covers it.",
           "I read {file} and the call graph around {topic}. It {verb} because the result is not memoised; "
           "a small LRU keyed by the request id fixes it without changing the API.",
           "Done: {topic} now reads its limits from settings.json with sane defaults, and the docs mention it. "
           "Run `make check` to see the new test go green.",
           "I could not reproduce it locally. Can you paste the full stack trace and the command you ran? "
           "It may depend on {cond}.",
           "Here is the plan: 1. add a failing test for {topic}, 2. fix the boundary in {file}, 3. update the changelog. "
           "Shall I go ahead?"]
QUERIES = ["pagination", "deadlock", "invoice totals", "webpack", "flaky integration", "expired",
           "regression test", "lexer", "NullPointerException", "pagin", "\"off-by-one\"", "zzzznotthere"]


def _text(rng: random.Random, pattern: str) -> str:
    return pattern.format(topic=rng.choice(TOPICS), file=rng.choice(FILES), err=rng.choice(ERRORS),
                          cond=rng.choice(CONDS), verb=rng.choice(VERBS))


def _turns(rng: random.Random, n: int) -> list[Message]:
    messages: list[Message] = []
    for i in range(n):
        messages.append(user_text(_text(rng, rng.choice(ASKS))))
        if rng.random() < 0.3:  # a tool call and its output: in the record, not in the search table
            call = ToolCallPart(tool_call_id=f"c{i}", tool_name="read_file", input={"path": rng.choice(FILES)})
            messages.append(AssistantMessage(content=[call]))
            messages.append(ToolMessage(content=[ToolResultPart(tool_call_id=f"c{i}", tool_name="read_file",
                                                                output="def page(items, cursor):\n    ...\n" * 20)]))
        messages.append(AssistantMessage(content=[TextPart(text=_text(rng, rng.choice(ANSWERS)))]))
    return messages


def create(home: Path, count: int, workspaces: list[str]) -> int:
    """`count` session files written directly (as bench/sessions.py does); the number of messages."""
    rng = random.Random(40)
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    start_ns = time.time_ns() - count * 60 * 10**9
    total = 0
    for n in range(count):
        created_ns = start_ns + n * 60 * 10**9
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created_ns / 1e9))
        messages = _turns(rng, rng.randint(1, 10))
        total += sum(1 for m in messages if not isinstance(m, ToolMessage))
        first = messages[0].content[0]
        record = SessionRecord(
            id=str(uuid_utils.uuid7(nanoseconds=created_ns)), created_at=f"{stamp}.000Z", updated_at=f"{stamp}.500Z",
            cwd=workspaces[n % len(workspaces)], provider="openai", model="gpt-5",
            title=make_title(first.text if isinstance(first, TextPart) else ""), messages=messages)
        (sessions / f"{record.id}.json").write_bytes(encode_record(record))
    return total


def search_in_server(home: Path, workspace: Path, rounds: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    with FakeChild() as fake:
        server = Server(workspace, server_env(home, fake.base_url))
        server.keep_notes = False
        try:
            start = time.perf_counter()
            server.command("shiro.sessions", {})
            result["first_list_in_server_ms"] = round((time.perf_counter() - start) * 1000, 1)
            start = time.perf_counter()
            server.command("shiro.sessions", {"query": "warm"})  # the first search: checks every file's text is in
            result["first_search_in_server_ms"] = round((time.perf_counter() - start) * 1000, 1)
            every: list[float] = []
            per_query: dict[str, Any] = {}
            for query in QUERIES:
                found = server.command("shiro.sessions", {"query": query})["sessions"]
                samples = []
                for _ in range(rounds):
                    start = time.perf_counter()
                    server.command("shiro.sessions", {"query": query})
                    samples.append((time.perf_counter() - start) * 1000)
                every += samples
                per_query[query] = {"found": len(found), **summary(samples)}
            result["search_in_server_ms"] = summary(every)
            result["per_query"] = per_query
        finally:
            server.close()
    return result


def update_per_save(home: Path, workspace: Path, saves: int) -> dict[str, Any]:
    """session_search.update timed inside real saves (the module's function wrapped, nothing else changed)."""
    timings: list[float] = []
    original = session_search.update

    def timed_update(*args: Any) -> None:
        start = time.perf_counter()
        original(*args)
        timings.append((time.perf_counter() - start) * 1000)

    session_search.update = timed_update  # type: ignore[assignment]
    rng = random.Random(41)
    store = SessionStore(home)
    try:
        rows = store.list(str(workspace), limit=saves)
        typical, whole = [], []
        for row in rows:
            record = store.load(row.id)
            lease = store.acquire(record.id)
            record.messages += _turns(rng, 1)
            start = time.perf_counter()
            store.save(record)
            whole.append((time.perf_counter() - start) * 1000)
            typical.append(timings[-1])
            lease.release()
        # One long session: 1,000 messages, then a turn appended to it each time.
        record = store.load(rows[0].id)
        while len(record.messages) < 1000:
            record.messages += _turns(rng, 10)
        lease = store.acquire(record.id)
        store.save(record)
        long_update, long_whole = [], []
        for _ in range(saves // 4):
            record.messages += _turns(rng, 1)
            start = time.perf_counter()
            store.save(record)
            long_whole.append((time.perf_counter() - start) * 1000)
            long_update.append(timings[-1])
        lease.release()
    finally:
        session_search.update = original  # type: ignore[assignment]
        store.close()
    return {
        "index_update_per_save_ms": summary(typical),
        "save_with_it_ms": summary(whole),
        "long_session_1000_messages": {"index_update_per_save_ms": summary(long_update), "save_with_it_ms": summary(long_whole)},
    }


def integrity_check(home: Path) -> dict[str, Any]:
    conn = sqlite3.connect(home / "sessions" / "index" / "sessions.sqlite3")
    try:
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            conn.execute("INSERT INTO search(search, rank) VALUES ('integrity-check', 0)")
            samples.append((time.perf_counter() - start) * 1000)
        rows = conn.execute("SELECT count(*) FROM search").fetchone()[0]
    finally:
        conn.close()
    return {"integrity_check_ms": summary(samples), "search_rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--saves", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="1,000 sessions, 5 rounds, 40 saves")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.count, args.rounds, args.saves = 1000, 5, 40
    root = Path(tempfile.mkdtemp(prefix="shiro-bench-search-"))
    try:
        home = root / "home"
        workspaces = []
        for w in range(4):
            folder = root / f"workspace-{w}"
            folder.mkdir()
            workspaces.append(folder.resolve())
        start = time.perf_counter()
        messages = create(home, args.count, [str(w) for w in workspaces])
        result: dict[str, Any] = {"sessions": args.count, "messages": messages,
                                  "write_files_s": round(time.perf_counter() - start, 1)}
        print(f"{args.count} sessions, {messages} messages", flush=True)
        result.update(search_in_server(home, workspaces[0], args.rounds))
        print("search:", result["search_in_server_ms"], flush=True)
        result.update(update_per_save(home, workspaces[0], args.saves))
        print("update:", result["index_update_per_save_ms"], flush=True)
        result.update(integrity_check(home))
        result["targets"] = {"search_in_server_ms": 50, "index_update_per_save_ms": 5}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
