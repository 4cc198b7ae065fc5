"""A scripted conversation with a frontend tool and a tool that needs approval, shared by the
loop, store and server tests of pending tool calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentstream import Agent, tool
from agentstream.messages import AssistantMessage, Message, ToolResultsMessage
from agentstream.pending import ClientTool
from agentstream.providers.scripted import ScriptedProvider

PICK = ClientTool(
    name="pick_color",
    description="Ask the user to pick a colour in the page.",
    parameters={"type": "object", "properties": {"hint": {"type": "string"}}},
)


def vendor_problem(messages: Sequence[Message]) -> str | None:
    """Why a vendor would refuse ``messages`` (every call answered at once, in the next
    message, and nothing else answered), or None."""
    for position, message in enumerate(messages):
        if isinstance(message, ToolResultsMessage):
            before = messages[position - 1] if position else None
            if not isinstance(before, AssistantMessage) or not before.tool_calls:
                return f"results at {position} answer no call"
            if message.pending:
                return f"results at {position} still wait for {message.pending}"
            called = [c.id for c in before.tool_calls]
            if sorted(r.tool_call_id for r in message.results) != sorted(called):
                return f"results at {position} do not answer {called}"
        elif isinstance(message, AssistantMessage) and message.tool_calls:
            after = messages[position + 1] if position + 1 < len(messages) else None
            if not isinstance(after, ToolResultsMessage):
                return f"calls at {position} have no results"
    return None


def script() -> ScriptedProvider:
    """'colour': a server call and a frontend call in one turn; 'refund': two refunds, one
    large enough to need approval; anything else: a plain answer."""
    return ScriptedProvider(
        {
            "rules": [
                {
                    "match": "colour",
                    "turns": [
                        {
                            "text": "Let me look and ask.",
                            "tool_calls": [
                                {"name": "lookup", "id": "c1", "arguments": {"q": "theme"}},
                                {"name": "pick_color", "id": "c2", "arguments": {"hint": "warm"}},
                            ],
                        },
                        {"text": "You picked it."},
                    ],
                },
                {
                    "match": "refund",
                    "turns": [
                        {
                            "tool_calls": [
                                {"name": "refund", "id": "r1", "arguments": {"amount": 500}},
                                {"name": "refund", "id": "r2", "arguments": {"amount": 5}},
                            ]
                        },
                        {"text": "Done."},
                    ],
                },
                {"turns": [{"text": "Fine."}]},
            ]
        }
    )


class Refunds:
    def __init__(self) -> None:
        self.made: list[float] = []

        @tool(requires_approval=lambda call: call.arguments["amount"] > 100)
        def refund(amount: float) -> str:
            """Refund an amount."""
            self.made.append(amount)
            return f"refunded {amount}"

        @tool
        def lookup(q: str) -> str:
            """Look something up."""
            return f"found {q}"

        self.tools = [refund, lookup]


def pending_agent(**options: Any) -> tuple[Agent, Refunds]:
    """An agent on :func:`script` with the refund and lookup tools."""
    refunds = Refunds()
    return Agent(model=script(), tools=refunds.tools, **options), refunds
