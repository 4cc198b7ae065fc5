"""``agentstream models`` (agentstream/cli/models.py; kept with the registry's tests because
the provider tests own their fake servers)."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest

from agentstream.cli import models
from agentstream.cli.loading import load_agent
from agentstream.providers.registry import ModelRegistry
from agentstream.server.models import ModelCatalog

from .fakes import FakeUpstream, Reply


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    models.configure(parser)
    return parser.parse_args(argv)


def test_prints_the_configured_models_as_a_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTSTREAM_MODELS", "openai:gpt-4.1-mini=GPT-4.1 mini,ollama:qwen3:14b")
    assert models.run(_args("--no-discover")) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert "openai:gpt-4.1-mini" in lines[1] and "GPT-4.1 mini" in lines[1]
    assert lines[1].lstrip().startswith("*")  # the first configured model is the default
    assert "ollama:qwen3:14b" in lines[2] and not lines[2].lstrip().startswith("*")


def test_json_output_includes_discovered_models(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream.routes["/api/tags"] = Reply.json(200, {"models": [{"model": "qwen3:14b"}]})
    monkeypatch.setenv("OLLAMA_HOST", upstream.url)
    monkeypatch.setenv("AGENTSTREAM_MODEL", "anthropic:claude-sonnet-4-5")

    assert models.run(_args("--json", "--timeout", "2")) == 0

    listed = json.loads(capsys.readouterr().out)
    assert [(m["id"], m["default"], m["source"]) for m in listed] == [
        ("anthropic:claude-sonnet-4-5", True, "configured"),
        ("ollama:qwen3:14b", False, "discovered"),
    ]


def test_a_bad_configured_id_is_reported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTSTREAM_MODELS", "gpt-4.1-mini")
    assert models.run(_args("--no-discover")) == 2
    assert "unknown model id 'gpt-4.1-mini'" in capsys.readouterr().err


AGENT_MODULE = """
from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider

own = ScriptedProvider({"turns": [{"text": "own"}]}, model="own")
other = ScriptedProvider({"turns": [{"text": "other"}]}, model="other")
agent = Agent(
    model=own,
    offered_models={"scripted:own=Own model": own, "scripted:other=Other model": other},
)
"""


def test_lists_what_the_server_offers_for_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same list as the server's ``GET /api/chat/models``, built by the same catalogue:
    the agent's own model first and default, then the models it offers, then the
    configured ones."""
    (tmp_path / "offering.py").write_text(AGENT_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTSTREAM_MODELS", "ollama:qwen3:14b")
    assert models.run(_args("-a", "offering:agent", "--json", "--no-discover")) == 0
    listed = json.loads(capsys.readouterr().out)

    catalog = ModelCatalog(load_agent("offering:agent"), ModelRegistry(discover=False))
    served = asyncio.run(catalog.models())
    assert [(m["id"], m["display_name"], m["default"]) for m in listed] == [
        (m["id"], m["name"], m["default"]) for m in served
    ]
    assert [(m["id"], m["display_name"], m["default"], m["source"]) for m in listed] == [
        ("scripted:own", "Own model", True, "agent"),
        ("scripted:other", "Other model", False, "agent"),
        ("ollama:qwen3:14b", "qwen3:14b (Ollama)", False, "configured"),
    ]
