"""What the command line says about a model it cannot use: an unknown id is one line, not a
traceback; a missing key names the variable to set, in ``chat`` and at ``serve`` start-up."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentstream.agent import Agent
from agentstream.cli.serve import _warn_of_a_missing_key
from tests.server.helpers import PROCESS_START

KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def chat(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS and k != "AGENTSTREAM_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "agentstream.cli", "chat", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=PROCESS_START, check=False,
    )  # fmt: skip


def test_an_unknown_model_id_is_one_line(tmp_path: Path) -> None:
    result = chat("-m", "mistral:large", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown model id 'mistral:large'" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("anthropic:claude-sonnet-4-5", "Anthropic: no API key: set ANTHROPIC_API_KEY"),
        ("gemini:gemini-2.5-flash", "Gemini: no API key: set GEMINI_API_KEY"),
    ],
)
def test_a_missing_key_names_the_variable(tmp_path: Path, model: str, says: str) -> None:
    result = chat("-m", model, "hi", cwd=tmp_path)
    assert says in result.stdout
    assert "TypeError" not in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_serve_warns_at_start_up_when_the_key_is_missing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    with caplog.at_level(logging.WARNING, logger="agentstream.serve"):
        _warn_of_a_missing_key(Agent(model="anthropic:claude-sonnet-4-5"))
    assert "no API key: set ANTHROPIC_API_KEY" in caplog.text

    caplog.clear()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-present")
    with caplog.at_level(logging.WARNING, logger="agentstream.serve"):
        _warn_of_a_missing_key(Agent(model="anthropic:claude-sonnet-4-5"))
    assert caplog.text == ""
    assert "sk-ant-test" not in caplog.text
