"""`shiro -p --output-format json|stream-json` and `--max-cost-usd` against the real server (issue
39): stdout parses, carries the session id, and the exit statuses are those docs/terminal.md names."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clients.test_terminal import env, cold_env, run  # noqa: F401 - fixtures
from tests.fake_provider import Call, Reply


def _session_files(tmp_path: Path) -> list[str]:
    return sorted(p.stem for p in (tmp_path / "home" / "sessions").glob("*.json"))


def test_json_prints_one_object_with_the_session_id_and_the_tool_calls(tmp_path, workspace, env, fake):
    fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"}, "r1")], usage=(1200, 30)),
                Reply(text="It prints hello.", usage=(1300, 20)))
    done = run(["-p", "what does hello.py do?", "--output-format", "json", "--model", "gpt-5"], workspace, env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # the whole of stdout is one object
    assert result["type"] == "result" and result["status"] == "completed" and result["exitCode"] == 0
    assert result["answer"] == "It prints hello."
    assert result["sessionId"] in _session_files(tmp_path)
    [call] = result["toolCalls"]
    assert call["name"] == "read_file" and call["input"] == {"path": "hello.py"} and not call["isError"]
    assert "hello" in call["output"]
    usage = result["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (2500, 50) and isinstance(usage["cachedTokens"], int)
    assert result["costUsd"] == round((2500 * 1.25 + 50 * 10) / 1_000_000, 6)


def test_stream_json_prints_one_event_per_line_then_the_result(tmp_path, workspace, env, fake):
    fake.script(Reply(text="Hello there.", chunks=3))
    done = run(["-p", "hi", "--output-format", "stream-json"], workspace, env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    types = [line["type"] for line in lines]
    assert types[0] == "turn_start" and types[-2:] == ["turn_end", "result"]
    assert "".join(line["text"] for line in lines if line["type"] == "text_delta") == "Hello there."
    session = lines[-1]["sessionId"]
    assert session in _session_files(tmp_path)
    assert all(line["sessionId"] == session for line in lines)
    assert lines[-1]["answer"] == "Hello there."


def test_the_cost_limit_stops_the_turn_and_exits_3(tmp_path, workspace, env, fake):
    fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"}, "r1")], usage=(1_000_000, 0)))
    done = run(["-p", "read it", "--output-format", "json", "--model", "gpt-5", "--max-cost-usd", "1"], workspace, env)
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    assert result["stoppedBy"] == "costLimit" and result["exitCode"] == 3 and result["status"] == "completed"
    assert "cost limit:" in done.stderr
    assert len(fake.main_requests) == 1


def test_an_error_is_a_result_too_and_output_format_needs_p(tmp_path, workspace, env, fake):
    from tests.fake_provider import HttpError

    fake.script(HttpError(400, message="bad request: nope", type="invalid_request_error"))
    done = run(["-p", "hi", "--output-format", "json"], workspace, env)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["status"] == "error" and "nope" in result["error"] and result["sessionId"]
    usage = run(["--output-format", "json"], workspace, env)
    assert usage.returncode == 2 and "--output-format is for one turn" in usage.stderr
