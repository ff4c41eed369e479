"""Issue 40 in the terminal, in a pseudo-terminal: `/resume` with no id opens the picker, typing
searches the sessions' text (the server's full-text search), Enter resumes the match; `/rename`,
`/export path`; Del then `y` deletes a session from the picker."""

from __future__ import annotations

import json
import time

from tests.clients.test_terminal import cold_env, env, session_ids, term  # noqa: F401 (fixtures)
from tests.fake_provider import Reply

S = r"(?:\x1b\[[0-9;]*m)*"  # the colours between the parts of a line


def test_resume_picker_searches_renames_exports_and_deletes(tmp_path, workspace, fake, term):  # noqa: F811
    fake.script(Reply(text="The narwhal ledger rounds once at the end."), Reply(text="Webpack now keeps its cache."))
    t = term()
    t.type("why is the invoice total off by a cent?")
    t.expect("narwhal ledger")
    t.type("/new")
    t.expect("new session")
    t.type("speed up the build")
    t.expect("keeps its cache")
    deadline = time.monotonic() + 30
    while len(session_ids(tmp_path)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the turn's save lands right after its answer
    first, second = sorted(session_ids(tmp_path))  # UUIDv7: the older one sorts first

    t.type("/resume")
    t.expect("resume a session")
    t.expect(r"search ›")
    t.type("narwh", enter=False)  # a prefix of a word of the answer, not of the title
    # The picker's rows are drawn by prompt_toolkit's screen diff (unchanged cells are skipped), so
    # only words that were not on the screen before are looked for.
    t.expect(r"narwhal")  # its passage under the row
    t.type("", enter=True)
    t.expect(rf'resumed {S}"why is the invoice total off by a cent\?"')

    t.type("/rename Invoice rounding")
    t.expect(rf'renamed {S}"Invoice rounding"')
    t.type("/export missing/invoice.md")
    t.expect(r"/export: .*missing/invoice\.md: No such file or directory")  # said, nothing half written
    t.type("/export invoice.md")
    t.expect(rf"exported to {S}.*invoice\.md")
    exported = (workspace / "invoice.md").read_text()
    assert exported.startswith("# Invoice rounding\n") and "narwhal ledger" in exported and "speed up" not in exported

    # The picker again: the other session, Del, y.
    t.type("/resume")
    t.expect(r"search ›")
    t.type("webpack", enter=False)  # a word of the answer: its passage is new on the screen
    t.expect(r"keeps")
    t.child.send("\x1b[3~")  # Del
    t.expect(r"deletes")
    t.type("y", enter=False)
    t.expect(rf'deleted {S}"speed up the build"')
    t.key("ctrl-c")  # Esc is eager in the picker; Ctrl-C clears the line
    assert session_ids(tmp_path) == [first]
    record = json.loads((tmp_path / "home" / "sessions" / f"{first}.json").read_text())
    assert record["title"] == "Invoice rounding"
