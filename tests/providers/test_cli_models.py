"""``agentstream models`` (agentstream/cli/models.py; kept with the registry's tests because
the provider tests own their fake servers)."""

from __future__ import annotations

import argparse
import json

import pytest

from agentstream.cli import models

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
