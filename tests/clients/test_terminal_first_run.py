"""Issue 39 in the terminal, under a pseudo-terminal against the real server and the HTTP fake
provider: a first run with no key and no endpoint asks for both, keeps the key (here: no keyring
backend, so the 0600 file beside the settings file; with a keyring backend, in the keyring) and
hands it to its server with `shiro.setCredentials` (the key-checking fake sees it in the
Authorization header, never in a command's environment); the next run, and `shiro -p`, use the kept
key without asking; `shiro -p` with nothing kept keeps its error and exit status 1; `/model` lists
the endpoint's models by number and `/model N` changes the next request's model. With an endpoint
given (an Ollama-like one serving only its own models), the first run lists them by number and the
pick is kept as the settings file's `model` (its other keys kept) and used by the next requests; an
endpoint that lists none skips the question with a line saying why.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pexpect

from tests.clients.test_terminal import SHIRO, _terms, run
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import server_env

KEY = "sk-terminal-key-8c41d2e0f7"
GAP = r"(?:\s|\x1b\[[0-9;]*[Cm])+"  # spaces (or prompt_toolkit's cursor-forward for a run of them), colours


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # No keyring backend (the fail backend): where a desktop has none, the file is the store.
    return server_env(tmp_path / "home", None, api_key=None, TERM="xterm",
                      PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring", **extra)


def test_first_run_asks_keeps_the_key_0600_and_the_next_runs_use_it(tmp_path: Path, workspace: Path, fake: FakeProvider) -> None:
    fake.api_key = KEY
    fake.models = ["fake-model", "fake-model-large"]
    env = _env(tmp_path)
    kept = Path(env["SHIRO_NEKO_CONFIG"]).parent / "credentials.json"
    fake.script(Reply(calls=[Call("run_command", {"command": "env"})]), Reply(text="first answer"),
                Reply(text="second answer"), Reply(text="oneshot answer"))
    terms = _terms(workspace, {**env, "SHIRO_WARM": "0"})
    start = next(terms)
    t = start("--approvals", "auto")
    t.expect("Set up model")
    t.expect("endpoint")
    t.type("not a url")
    t.expect("not an http")
    t.type(fake.base_url)
    t.expect("API key")
    t.type(KEY)
    t.expect(re.escape(f"kept in {kept} (yours alone, 0600): the endpoint and the key"))
    t.expect(re.escape("Enter keeps gpt-5"))  # the model question (the test below picks one)
    t.type("")
    t.type("print the environment")
    t.expect("first answer")
    assert [r.headers["authorization"] for r in fake.requests] == [f"Bearer {KEY}"] * 2
    output = json.dumps(fake.requests[1].body)
    assert "PATH=" in output and KEY not in output  # the command ran without the key in its environment
    t.type("/model")
    t.expect(rf"1{GAP}fake-model")
    t.expect(rf"2{GAP}fake-model-large")
    t.expect(rf"3\*{GAP}gpt-5")
    t.type("/model 2")
    t.expect("model fake-model-large")
    t.type("again")
    t.expect("second answer")
    assert fake.requests[-1].body["model"] == "fake-model-large"
    t.leave()
    next(terms, None)
    # The key is kept 0600 (its folder 0700), the endpoint beside it; never in the server's home.
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert json.loads(kept.read_text()) == {"baseUrl": fake.base_url, "store": "file", "apiKey": KEY}
    home = tmp_path / "home"
    assert [p for p in home.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()] == []
    # A script run uses the kept key and endpoint without asking.
    done = run(["-p", "and once more"], workspace, env, timeout=120)
    assert done.returncode == 0 and "oneshot answer" in done.stdout, done
    assert fake.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_oneshot_with_nothing_kept_keeps_its_error_and_never_asks(tmp_path: Path, workspace: Path) -> None:
    done = run(["-p", "hello?"], workspace, _env(tmp_path), timeout=60)
    assert done.returncode == 1 and "no model endpoint is set up" in done.stderr, done
    assert "shiro setup" in done.stderr and "API key" not in done.stdout
    assert not (Path(_env(tmp_path)["SHIRO_NEKO_CONFIG"]).parent / "credentials.json").exists()


def test_shiro_setup_on_a_terminal(tmp_path: Path, workspace: Path) -> None:
    env = _env(tmp_path)
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["setup"], cwd=str(workspace), env=env, dimensions=(40, 120), encoding="utf-8")
    child.expect("endpoint", timeout=60)
    child.sendline("")
    child.expect("API key", timeout=30)
    child.sendline(KEY)
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0 and KEY not in (child.before or "")
    kept = Path(env["SHIRO_NEKO_CONFIG"]).parent / "credentials.json"
    assert json.loads(kept.read_text()) == {"store": "file", "apiKey": KEY}
    assert os.stat(kept).st_mode & 0o077 == 0


def test_first_run_with_an_ollama_like_endpoint_picks_the_model_and_keeps_it(tmp_path: Path, workspace: Path,
                                                                             fake: FakeProvider) -> None:
    # An endpoint that serves only its own models, as Ollama or vLLM: the default gpt-5 would fail.
    fake.models = ["llama3.2:3b", "qwen2.5-coder:7b"]
    fake.strict_models = True
    env = _env(tmp_path)
    settings = Path(env["SHIRO_NEKO_CONFIG"])
    settings.write_text(json.dumps({"approvals": "auto", "maxCostUsd": 5}))
    fake.script(Reply(text="local answer"), Reply(text="oneshot local answer"))
    terms = _terms(workspace, {**env, "SHIRO_WARM": "0"})
    t = next(terms)()
    t.expect("endpoint")
    t.type(fake.base_url)
    t.expect("API key")
    t.type("")  # Ollama needs none
    t.expect(r"1\s+llama3\.2:3b")
    t.expect(r"2\s+qwen2\.5-coder:7b")
    t.expect(re.escape("model (number or name; Enter keeps gpt-5 (the endpoint does not list it))"))
    t.type("7")
    t.expect("not a number from 1 to 2")
    t.type("2")
    t.expect(re.escape(f"model qwen2.5-coder:7b: kept in {settings}"))
    t.type("hello")
    t.expect("local answer")
    assert fake.main_requests[-1].body["model"] == "qwen2.5-coder:7b"
    t.leave()
    next(terms, None)
    assert json.loads(settings.read_text()) == {"approvals": "auto", "maxCostUsd": 5, "model": "qwen2.5-coder:7b"}
    done = run(["-p", "and once more"], workspace, env, timeout=120)
    assert done.returncode == 0 and "oneshot local answer" in done.stdout, done
    assert fake.main_requests[-1].body["model"] == "qwen2.5-coder:7b"


def test_shiro_setup_says_why_when_the_endpoint_lists_no_models(tmp_path: Path, workspace: Path, fake: FakeProvider) -> None:
    fake.api_key = KEY  # the list is refused without it: the question is skipped, the set-up still kept
    env = _env(tmp_path)
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["setup"], cwd=str(workspace), env=env, dimensions=(40, 120), encoding="utf-8")
    child.expect("endpoint", timeout=60)
    child.sendline(fake.base_url)
    child.expect("API key", timeout=30)
    child.sendline("sk-wrong")
    child.expect(re.escape("no model list from the endpoint (the endpoint refused the key (401))"), timeout=30)
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0
    assert not Path(env["SHIRO_NEKO_CONFIG"]).exists()
