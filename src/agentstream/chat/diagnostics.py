"""Diagnostics for the ``complete`` event of the chat tray, when a deployment enables them.

They show a developer what the model was given and what it said: model, limits, tool names,
system prompt, messages, context and the raw response before markers were parsed. They never
carry secrets: the caller's bearer token and every value found under a secret-looking key of
the context are scrubbed from every string (a prompt or message may quote them), secret keys
are redacted at any depth, and strings shaped like API keys or bearer headers are replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any, assert_never

from agentstream.agent import Agent, RunInput
from agentstream.chat.redaction import SECRET_KEYS, Scrubber, secret_values
from agentstream.events import ContextReport
from agentstream.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage
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
    secret_keys: AbstractSet[str] = SECRET_KEYS,
    context: ContextReport | None = None,
) -> dict[str, Any]:
    """The chat tray's diagnostics object, scrubbed of secrets. ``context`` is how full the
    model's window was at the run's last model call: listed as ``context_budget``, tokens
    by what took them."""
    messages: list[Message] = [*run_input.history, UserMessage(content=run_input.message)]
    temperature = run_input.temperature if run_input.temperature is not None else agent.temperature
    diagnostics: dict[str, Any] = {
        "model": request.model or agent.model_id,
        "max_tokens": run_input.max_tokens or agent.max_tokens,
        "max_iterations": run_input.max_turns or agent.max_turns,
        "temperature": temperature,
        "tools": list(tool_names),
        "system_prompt": run_input.system if run_input.system is not None else agent.instructions,
        "messages": [_as_listed(message) for message in messages],
        "context": request.context,
        "raw_llm_response": raw_response,
    }
    if context is not None:
        diagnostics["context_budget"] = {
            "window": context.window,
            "used": context.tokens,
            "system_prompt": context.system,
            "tools": context.tools,
            "summary": context.summary,
            "history": context.history,
            "reserved_for_answer": context.max_tokens,
            "exchanges_left_out": context.left_out,
            "exchanges_summarized": context.summarized,
        }
    if problems:
        diagnostics["parse_warnings"] = list(problems)
    secrets = [request.principal.token, *secret_values(request.context, secret_keys)]
    scrub = Scrubber(secrets, secret_keys)
    cleaned: dict[str, Any] = scrub(diagnostics)
    return cleaned


def _as_listed(message: Message) -> dict[str, Any]:
    """A message as the diagnostics list it: ``{"role", "content"}``. Tool results are a user
    message of ``tool_result`` blocks, as the model received them; an assistant message that called
    tools also lists them under ``tool_calls`` (id, name, input). Reasoning and vendor data
    are left out: they are not the conversation a developer reads."""
    match message:
        case UserMessage(content=content):
            return {"role": "user", "content": content}
        case AssistantMessage(text=text, tool_calls=calls):
            shown: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                shown["tool_calls"] = [
                    {"id": call.id, "name": call.name, "input": call.arguments} for call in calls
                ]
            return shown
        case ToolResultsMessage(results=results):
            blocks: list[dict[str, Any]] = []
            for part in results:
                block: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": part.tool_call_id,
                    "content": part.content,
                }
                if part.is_error:
                    block["is_error"] = True
                blocks.append(block)
            return {"role": "user", "content": blocks}
        case _:
            assert_never(message)
