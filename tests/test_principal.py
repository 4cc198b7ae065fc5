"""Secrets stay out of the ``repr`` of everything that carries them, since a ``repr`` is what
ends up in logs, tracebacks and debugger output."""

from __future__ import annotations

from agentstream import Agent, RunInput, ToolContext
from agentstream.principal import Principal
from agentstream.providers.anthropic import AnthropicProvider
from agentstream.providers.google import GoogleProvider
from agentstream.providers.openai import OpenAIProvider
from agentstream.runs import RunRequest
from agentstream.server.settings import Settings

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
KEY = "sk-test-0123456789abcdefghijklmnop"


def test_no_secret_in_any_repr() -> None:
    principal = Principal(user_id="alice", token=TOKEN, claims={"sub": "alice", "raw": TOKEN})
    providers = [
        AnthropicProvider("claude-sonnet-4-5", api_key=KEY),
        OpenAIProvider("gpt-4.1-mini", api_key=KEY),
        GoogleProvider("gemini-2.5-flash", api_key=KEY),
    ]
    settings = Settings(jwt_secret=KEY, redis_url=f"redis://:{KEY}@127.0.0.1:6379/0")
    shown = [
        principal,
        ToolContext(principal=principal, run_id="r", call_id="c", tool_name="t"),
        RunRequest(message="hi", principal=principal),
        RunInput(message="hi", principal=principal),
        settings,
        *providers,
        Agent(model=providers[0]),
    ]
    for value in shown:
        text = repr(value)
        assert TOKEN not in text and KEY not in text, text
    assert "alice" in repr(principal)


def test_the_owner_key_is_tenant_and_user_together() -> None:
    """No tenant is the empty tenant (as stored); any other difference is another owner."""
    alice = Principal(user_id="alice")
    assert alice.owner == Principal(user_id="alice", tenant_id="").owner
    assert alice.owner == Principal(user_id="alice", token=TOKEN).owner
    others = [
        Principal(user_id="bob"),
        Principal(user_id="alice", tenant_id="acme"),
        Principal(user_id="acme", tenant_id="alice"),
    ]
    assert len({alice.owner, *(other.owner for other in others)}) == 4
    assert Principal(user_id="alice", tenant_id="acme").tenant == "acme"
    assert alice.tenant == ""
