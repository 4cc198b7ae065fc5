"""The scripted model: scripts from files, rules, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agentstream import Agent
from agentstream.events import RunCompleted, RunFailed
from agentstream.providers.scripted import Script, ScriptedProvider

from .helpers import collect, types

YAML_SCRIPT = """
delay: 0
rules:
  - match: weather
    turns:
      - text: "Sunny."
  - turns:
      - reasoning: ["Hmm", "..."]
        text: ["I ", "don't know."]
        usage: {input_tokens: 4, output_tokens: 3, cache_read_tokens: 2}
"""


async def test_rules_pick_turns_by_the_latest_user_message(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(YAML_SCRIPT)
    agent = Agent(model=ScriptedProvider.from_file(path))
    weather = await collect(agent, "What's the weather?")
    other = await collect(agent, "Tell me a joke")
    assert isinstance(weather[-1], RunCompleted) and weather[-1].message == "Sunny."
    assert isinstance(other[-1], RunCompleted) and other[-1].message == "I don't know."
    assert other[-1].usage.cache_read_tokens == 2


async def test_running_out_of_script_is_a_provider_error() -> None:
    provider = ScriptedProvider({"turns": [{"tool_calls": [{"name": "missing"}]}]})
    events = await collect(Agent(model=provider))
    assert isinstance(events[-1], RunFailed)
    assert events[-1].message == "The script has no turn 1 for this message."


def test_a_malformed_script_is_rejected_clearly() -> None:
    with pytest.raises(ValidationError, match="tool_calls"):
        Script.parse({"turns": [{"tool_calls": "not a list"}]})
    with pytest.raises(ValidationError, match="Extra inputs"):
        Script.parse({"turns": [{"txt": "typo"}]})


async def test_function_scripts() -> None:
    provider = ScriptedProvider(lambda request: {"text": f"{len(request.messages)} message(s)"})
    events = await collect(Agent(model=provider))
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "1 message(s)"


async def test_the_offline_demo_shows_every_kind_of_event() -> None:
    from agentstream.demo import demo_agent

    events = await collect(demo_agent(), "show me")
    kinds = set(types(events))
    assert {"reasoning_delta", "text_delta", "tool_call_args", "tool_progress", "payload"} <= kinds
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert "offline demo" in done.message
    assert "SUGGESTED_VALUES" in done.message  # parsed into chips by agentstream.chat


async def test_the_demo_model_with_someone_elses_tools_only_explains_itself() -> None:
    from agentstream.demo import demo_provider
    from agentstream.tools import tool

    @tool
    def mine() -> str:
        """A user's tool."""
        return ""

    events = await collect(Agent(model=demo_provider(), tools=[mine]), "hi")
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert "offline demo" in done.message and "(mine)" in done.message
    assert "tool_call_started" not in types(events)


async def test_the_demo_says_a_key_alone_chooses_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentstream.demo import demo_agent

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("AGENTSTREAM_MODEL", raising=False)
    without = await collect(demo_agent(), "hi")
    assert isinstance(without[-1], RunCompleted)
    assert "no model is chosen (`AGENTSTREAM_MODEL` is not set)" in without[-1].message

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-shown")
    keyed = await collect(demo_agent(), "hi")
    assert isinstance(keyed[-1], RunCompleted)
    message = keyed[-1].message
    assert "`ANTHROPIC_API_KEY` is set, but no model is chosen" in message
    assert "`anthropic:claude-sonnet-4-5`" in message and "sk-ant-test" not in message
