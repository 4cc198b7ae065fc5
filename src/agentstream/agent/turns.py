"""Assembling one model turn from a provider's stream.

The provider streams text, reasoning and tool calls whose JSON arguments arrive in fragments;
:class:`TurnBuilder` collects them into the :class:`AssistantMessage` that goes into history.
It is the one place that knows how fragments and reasoning signatures combine, so no provider
or loop step computes that itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentstream.messages import AssistantMessage, Reasoning, ToolCall

__all__ = ["PendingCall", "TurnBuilder"]


@dataclass(slots=True)
class PendingCall:
    call_id: str
    name: str
    index: int
    provider_data: dict[str, Any] | None = None
    fragments: list[str] = field(default_factory=list)

    @property
    def raw_arguments(self) -> str:
        return "".join(self.fragments)

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as an object, or empty when the model's JSON is broken (the error
        reaches the model through the tool result)."""
        try:
            value = json.loads(self.raw_arguments or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


class TurnBuilder:
    __slots__ = ("_reasoning", "_reasoning_text", "calls", "provider", "text")

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.text: list[str] = []
        self.calls: dict[str, PendingCall] = {}
        self._reasoning: list[Reasoning] = []
        self._reasoning_text: list[str] = []

    def add_reasoning(self, text: str, signature: str | None, redacted: str | None) -> None:
        if redacted is not None:
            self._close_reasoning(None)
            self._reasoning.append(Reasoning(redacted=redacted, provider=self.provider))
            return
        if text:
            self._reasoning_text.append(text)
        if signature is not None:
            self._close_reasoning(signature)

    def _close_reasoning(self, signature: str | None) -> None:
        if self._reasoning_text or signature is not None:
            block = Reasoning(
                text="".join(self._reasoning_text), signature=signature, provider=self.provider
            )
            self._reasoning.append(block)
        self._reasoning_text = []

    def message(self, *, complete_calls: bool = True) -> AssistantMessage:
        """The turn as history. Without ``complete_calls`` (an interrupted turn) tool calls are
        dropped: their arguments may be cut off and no result will follow."""
        self._close_reasoning(None)
        calls = tuple(
            ToolCall(
                id=c.call_id,
                name=c.name,
                arguments=c.parsed_arguments(),
                provider_data=c.provider_data,
            )
            for c in self.calls.values()
        )
        return AssistantMessage(
            text="".join(self.text),
            reasoning=tuple(self._reasoning),
            tool_calls=calls if complete_calls else (),
        )

    @property
    def output_characters(self) -> int:
        """How much the model wrote in this turn so far (text, reasoning, tool arguments):
        what a turn cut short is billed from when the vendor never said."""
        written = sum(map(len, self.text)) + sum(map(len, self._reasoning_text))
        written += sum(len(block.text or "") for block in self._reasoning)
        return written + sum(len(fragment) for c in self.calls.values() for fragment in c.fragments)

    @property
    def has_content(self) -> bool:
        return bool(self.text or self._reasoning or self._reasoning_text)
