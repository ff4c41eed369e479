"""/compact keeps what it replaced for display only (issue 25): the record's `compacted` spans come
back with `shiro.resume` (a reload, another server), and no request to the model carries them.
A real service on the HTTP fake provider, real records in a temporary SHIRO_NEKO_HOME."""

from __future__ import annotations

import json
from pathlib import Path

from shiro_neko.features.compaction import kept_for_display
from shiro_neko.model.session_state import CompactedSpan
from shiro_neko.protocol import CompactArgs
from shiro_neko.state.session_record import decode_record
from tests.fake_provider import FakeProvider, Reply
from tests.support.builders import user
from tests.support.service import chat, running_service


def texts(messages) -> list[str]:  # type: ignore[no-untyped-def]
    return [p.text for m in messages for p in m.content if hasattr(p, "text")]


async def test_the_messages_before_compact_come_back_on_resume_and_never_reach_the_model(
    shiro_home: Path, fake: FakeProvider, workspace: Path
) -> None:
    fake.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="## Goal\nthe summary"),
                Reply(text="after the compact"))
    async with running_service(fake, workspace) as service:
        session, _ = await chat(service, "first task: the secret word is PELICAN")
        await chat(service, "second task", sessionId=session.id)
        result = await service.compaction.compact(CompactArgs(sessionId=session.id))
        assert result.messagesBefore == 4 and result.messagesAfter == 1
        await chat(service, "go on", sessionId=session.id)
        # The request after /compact: the summary and the new prompt, nothing it replaced.
        last = json.dumps(fake.main_requests[-1].body)
        assert "the summary" in last and "PELICAN" not in last and "first answer" not in last
        await service.persistence.save(session)
        session_id = session.id
    record = decode_record((shiro_home / "sessions" / f"{session_id}.json").read_bytes())
    assert len(record.compacted) == 1 and record.compacted[0].compacted_at
    assert texts(record.compacted[0].messages) == ["first task: the secret word is PELICAN", "first answer",
                                                   "second task", "second answer"]
    async with running_service(fake, workspace) as later:  # a reload: a new server on the same home
        resumed = await later.persistence.resume(later.workspaces.pick(None), None, latest=True)
        assert resumed.sessionId == session_id
        assert texts(resumed.compacted[0].messages)[0].endswith("PELICAN")
        assert "the summary" in texts(resumed.messages)[0] and texts(resumed.messages)[-1] == "after the compact"
        # ... and a turn after the resume still sends none of it.
        fake.script(Reply(text="still fine"))
        await chat(later, "one more", sessionId=session_id)
        assert "PELICAN" not in json.dumps(fake.main_requests[-1].body)


def test_the_kept_history_is_bounded_oldest_first() -> None:
    spans: list[CompactedSpan] = []
    for n in range(4):
        new = CompactedSpan(compacted_at=f"t{n}", messages=[user(f"{n}-{i}") for i in range(40)])
        spans = kept_for_display(spans, new, limit=100)
    assert sum(len(s.messages) for s in spans) == 100
    assert [s.compacted_at for s in spans] == ["t1", "t2", "t3"]
    assert texts(spans[0].messages)[0] == "1-20" and texts(spans[-1].messages)[-1] == "3-39"
