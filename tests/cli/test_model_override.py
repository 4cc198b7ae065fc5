"""``AGENTSTREAM_MODEL`` replaces the model of every agent the command line loads, as the docs
promise, and a model id that cannot be served is one line on every way in: ``serve``,
``chat``, ``chat -m``, ``models`` and the variable itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentstream.cli.loading import AgentLoadError, load_agent, load_hooks

from ..server.helpers import PROCESS_START, parse_sse, serve_process

MYAPP = '''
from agentstream import Agent, tool


@tool
def check_service(service: str) -> str:
    """Check a service."""
    return f"{service} answers in 840 ms."


agent = Agent(model="anthropic:claude-sonnet-4-5", tools=[check_service])
'''

SCRIPT = """\
turns:
  - text: "Let me check."
    tool_calls: [{name: check_service, arguments: {service: billing}}]
  - text: "Billing is slow, from the script."
"""

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "myapp.py").write_text(MYAPP)
    (tmp_path / "script.yaml").write_text(SCRIPT)
    return tmp_path


def environment(app_dir: Path, **values: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_") and k not in KEYS
    }
    return env | {"AGENTSTREAM_DATA_DIR": str(app_dir / "data"), **values}


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentstream.cli", *args],
        cwd=cwd, env=environment(cwd, **env), capture_output=True, text=True, timeout=PROCESS_START,
        check=False,
    )  # fmt: skip


def test_chat_answers_from_the_model_the_variable_names(app_dir: Path) -> None:
    result = cli(
        "chat", "-a", "myapp:agent", "Is billing down?", cwd=app_dir,
        AGENTSTREAM_MODEL="scripted:script.yaml",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Billing is slow, from the script." in result.stdout
    assert "check_service" in result.stdout


def test_serve_answers_from_the_model_the_variable_names(app_dir: Path) -> None:
    env = environment(app_dir, AGENTSTREAM_MODEL="scripted:script.yaml")
    with serve_process("myapp:agent", cwd=app_dir, env=env) as url:
        models = httpx.get(f"{url}/api/chat/models").json()
        answer = httpx.post(
            f"{url}/api/chat/stream", json={"message": "Is billing down?"}, timeout=30
        )
    default = [m["id"] for m in models["models"] if m.get("default")]
    assert default == ["scripted:script.yaml"]
    [complete] = [f.data for f in parse_sse(answer.text) if f.data.get("type") == "complete"]
    assert complete["payload"]["message"].endswith("Billing is slow, from the script.")


def test_the_variable_reaches_the_model_list_of_an_agent(app_dir: Path) -> None:
    result = cli(
        "models", "-a", "myapp:agent", "--no-discover", "--json", cwd=app_dir,
        AGENTSTREAM_MODEL="scripted:script.yaml",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert '"id": "scripted:script.yaml"' in result.stdout
    assert "anthropic" not in result.stdout


WAYS_IN = {
    "serve with the variable": (("serve", "myapp:agent", "--port", "1"), "antropic:claude"),
    "serve the demo with the variable": (("serve", "--port", "1"), "antropic:claude"),
    "chat with the variable": (("chat", "-a", "myapp:agent", "hi"), "antropic:claude"),
    "chat -m": (("chat", "-a", "myapp:agent", "-m", "antropic:claude", "hi"), None),
    "chat -m with a missing script": (
        ("chat", "-a", "myapp:agent", "-m", "scripted:foo", "hi"),
        None,
    ),
    "models with the variable": (
        ("models", "-a", "myapp:agent", "--no-discover"),
        "antropic:claude",
    ),
    "serve with a missing script": (
        ("serve", "myapp:agent", "--port", "1"),
        "scripted:nowhere.yaml",
    ),
}


@pytest.mark.parametrize("way", WAYS_IN.values(), ids=WAYS_IN.keys())
def test_a_model_id_that_cannot_be_served_is_one_line(
    app_dir: Path, way: tuple[tuple[str, ...], str | None]
) -> None:
    args, variable = way
    env = {"AGENTSTREAM_MODEL": variable} if variable else {}
    result = cli(*args, cwd=app_dir, **env)
    output = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 2, output
    assert len(output) == 1, output
    assert "Traceback" not in output[0]
    bad = variable or args[args.index("-m") + 1]
    assert repr(bad) in output[0] or repr(bad.partition(":")[2]) in output[0], output
    if variable:
        assert "AGENTSTREAM_MODEL" in output[0]


def test_a_script_that_is_not_a_script_names_what_is_wrong(
    app_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (app_dir / "broken.yaml").write_text("turns: [{text: [1, 2]}]: :\n")
    (app_dir / "wrong.yaml").write_text("turns: 3\n")
    monkeypatch.chdir(app_dir)
    monkeypatch.setenv("AGENTSTREAM_MODEL", "scripted:broken.yaml")
    with pytest.raises(AgentLoadError, match=r"'broken.yaml' is not JSON or YAML"):
        load_agent("myapp:agent")
    monkeypatch.setenv("AGENTSTREAM_MODEL", "scripted:wrong.yaml")
    with pytest.raises(AgentLoadError, match=r"'wrong.yaml' is not a script: rules"):
        load_agent("myapp:agent")


def test_a_chat_option_naming_an_agent_says_so_in_english(
    app_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(app_dir)
    with pytest.raises(AgentLoadError, match=r"'myapp:agent' is an Agent, not a ChatConfig"):
        load_hooks("myapp:agent")
