"""The command line: loading a user's agent and chatting in the terminal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentstream.cli.loading import AgentLoadError, load_agent
from tests.server.helpers import PROCESS_START

AGENT_MODULE = '''
from agentstream import Agent, tool
from agentstream.providers.scripted import ScriptedProvider

@tool
def shout(text: str) -> str:
    """Shout."""
    return text.upper()

agent = Agent(
    model=ScriptedProvider({"turns": [
        {"text": "Shouting.", "tool_calls": [{"name": "shout", "arguments": {"text": "hey"}}]},
        {"text": "Done: HEY", "usage": {"input_tokens": 11, "output_tokens": 5}},
    ]}),
    tools=[shout],
)
not_an_agent = 42
'''


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentstream.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=PROCESS_START, check=False,
    )  # fmt: skip


def test_chat_renders_text_tools_and_usage(tmp_path: Path) -> None:
    (tmp_path / "myagent.py").write_text(AGENT_MODULE)
    result = run_cli("chat", "-a", "myagent:agent", "shout hey", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Shouting." in out
    assert "shout" in out and "✔" in out
    assert "Done: HEY" in out
    assert "tokens: 11 in, 5 out" in out


def test_chat_with_the_demo_agent(tmp_path: Path) -> None:
    result = run_cli("chat", "hello", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "offline demo" in result.stdout
    assert "search_docs" in result.stdout or "Searching the docs" in result.stdout


def test_chat_reports_a_bad_agent_reference(tmp_path: Path) -> None:
    result = run_cli("chat", "-a", "nowhere:agent", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot import 'nowhere'" in result.stdout
    said = " ".join(result.stdout.split())  # the terminal wraps long lines
    assert f"imported from the current directory, {tmp_path})" in said


def test_load_agent_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "myagent2.py").write_text(AGENT_MODULE)
    monkeypatch.chdir(tmp_path)
    assert load_agent("myagent2:agent").toolset.resolve()[0].name == "shout"
    with pytest.raises(AgentLoadError, match="expected 'module:attribute'"):
        load_agent("myagent2")
    with pytest.raises(AgentLoadError, match="has no attribute 'nope'"):
        load_agent("myagent2:nope")
    with pytest.raises(AgentLoadError, match="is an int, not an Agent"):
        load_agent("myagent2:not_an_agent")


def test_serve_on_a_busy_port_says_so_in_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("serve", "--no-store", "--port", str(port), cwd=tmp_path)
    assert result.returncode == 2
    output = result.stdout + result.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in output
    assert f"--port {port + 1}" in output
    assert "Traceback" not in output
    assert "startup complete" not in output


def test_help_reads_as_plain_text(tmp_path: Path) -> None:
    for command in ((), ("serve",), ("chat",), ("models",), ("db",)):
        result = run_cli(*command, "--help", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "``" not in result.stdout and ":class:" not in result.stdout, result.stdout


def test_models_marks_the_model_the_server_uses(tmp_path: Path) -> None:
    import os

    (tmp_path / "myagent.py").write_text(
        "from agentstream import Agent\nagent = Agent(model='anthropic:claude-sonnet-4-5')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env["AGENTSTREAM_MODELS"] = "openai:gpt-4.1-mini"

    def default_of(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "agentstream.cli", "models", "--no-discover", "--json", *args],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PROCESS_START, check=True,
        )  # fmt: skip
        import json

        (default,) = [m["id"] for m in json.loads(result.stdout) if m["default"]]
        return default

    assert default_of() == "openai:gpt-4.1-mini"  # what `agentstream serve` runs the demo on
    assert default_of("-a", "myagent:agent") == "anthropic:claude-sonnet-4-5"


def test_chat_renders_markdown_and_suggestions_without_marker_lines(tmp_path: Path) -> None:
    result = run_cli("chat", "hello", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "suggestions: ‹Show me again›" in out
    assert "SUGGESTED_" not in out
    assert "| event |" not in out and "event      what it shows" in out  # a rendered table


def test_chat_takes_a_chat_config(tmp_path: Path) -> None:
    (tmp_path / "myagent.py").write_text(
        AGENT_MODULE
        + "\nfrom agentstream.chat import ChatConfig, PayloadType\n"
        + "chat = ChatConfig(payload_types=[PayloadType.llm('plan', instructions='Plans.')])\n"
    )
    result = run_cli("chat", "-a", "myagent:agent", "--chat", "myagent:chat", "hey", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    bad = run_cli(
        "chat", "-a", "myagent:agent", "--chat", "myagent:not_an_agent", "hey", cwd=tmp_path
    )
    assert bad.returncode == 2
    assert "not a ChatConfig or RunHooks" in bad.stdout


def test_tool_arguments_are_shortened_value_by_value() -> None:
    from agentstream.cli.chat import call_summary

    summary = call_summary({"query": "x" * 100, "limit": 5})
    assert summary == 'query="' + "x" * 37 + '…", limit=5'


def test_http_clients_log_each_request_only_when_asked() -> None:
    """httpx logs every request's full URL at INFO; a server would log one per model call."""
    script = (
        "import logging, httpx\n"
        "from agentstream.cli import configure_logging\n"
        "configure_logging(verbose={verbose})\n"
        "transport = httpx.MockTransport(lambda request: httpx.Response(200))\n"
        "httpx.Client(transport=transport).get('https://api.example/v1?key=secret')\n"
    )
    quiet = subprocess.run(
        [sys.executable, "-c", script.format(verbose=False)], capture_output=True, text=True
    )
    loud = subprocess.run(
        [sys.executable, "-c", script.format(verbose=True)], capture_output=True, text=True
    )
    assert quiet.returncode == loud.returncode == 0
    assert "key=secret" not in quiet.stderr
    assert "HTTP Request: GET https://api.example/v1?key=secret" in loud.stderr
