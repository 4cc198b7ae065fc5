"""Diagnostics for the ``complete`` event (003 "Diagnostics"), when a deployment enables them.

They show a developer what the model was given and what it said: model, limits, tool names,
system prompt, messages, context and the raw response before markers were parsed. They never
carry secrets: the caller's bearer token and every value found under a secret-looking key of
the context are scrubbed from every string (a prompt or message may quote them), secret keys
are redacted at any depth, and strings shaped like API keys or bearer headers are replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentstream.agent import Agent, RunInput
from agentstream.chat.redaction import Scrubber, secret_values
from agentstream.messages import MESSAGES_ADAPTER, Message, UserMessage
from agentstream.runs.request import RunRequest

__all__ = ["build_diagnostics"]


def build_diagnostics(
    agent: Agent,
    request: RunRequest,
    run_input: RunInput,
    *,
    tool_names: Sequence[str],
    raw_response: str,
    problems: Sequence[str] = (),
) -> dict[str, Any]:
    """003's diagnostics object, scrubbed of secrets."""
    messages: list[Message] = [*run_input.history, UserMessage(content=run_input.message)]
    temperature = run_input.temperature if run_input.temperature is not None else agent.temperature
    diagnostics: dict[str, Any] = {
        "model": request.model or agent.model_id,
        "max_tokens": run_input.max_tokens or agent.max_tokens,
        "max_iterations": run_input.max_turns or agent.max_turns,
        "temperature": temperature,
        "tools": list(tool_names),
        "system_prompt": run_input.system if run_input.system is not None else agent.instructions,
        "messages": MESSAGES_ADAPTER.dump_python(messages, mode="json"),
        "context": request.context,
        "raw_llm_response": raw_response,
    }
    if problems:
        diagnostics["parse_warnings"] = list(problems)
    scrub = Scrubber([request.principal.token, *secret_values(request.context)])
    cleaned: dict[str, Any] = scrub(diagnostics)
    return cleaned
