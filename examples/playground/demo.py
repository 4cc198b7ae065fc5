"""The playground's offline models: two scripted analysts (one reasons before it answers,
one does not) that query the tenant's database for data requests, search its documents for
other questions when document search is on, and answer in Markdown. Every answer is labelled
as the offline demo."""

from __future__ import annotations

import re
from typing import Any

from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
from examples._common import DEMO_LABEL, tool_results_since_user

__all__ = ["playground_models"]

DATA_WORDS = re.compile(
    r"\b(customers?|orders?|products?|revenue|count|how many|top|sales)\b", re.IGNORECASE
)
SHOWN_ROWS = 10
HIDDEN_COLUMNS = ("email", "created_at")
"""Left out of the chat's table (the tool result keeps every column)."""
_DELAY = 0.01


def _turn(request: ChatRequest, *, reasons: bool) -> ScriptedTurn:
    asked, turn = position(request)
    offered = {spec.name for spec in request.tools}
    think = reasons and request.options.get("reasoning") is not False

    def say(text: str, reasoning: str = "", **extra: Any) -> ScriptedTurn:
        fields: dict[str, Any] = {"text": text, "delay": _DELAY, **extra}
        if think and reasoning:
            fields["reasoning"] = reasoning
        fields.setdefault("usage", {"input_tokens": 400 + 50 * turn, "output_tokens": 60})
        return ScriptedTurn.model_validate(fields)

    if turn == 0:
        if DATA_WORDS.search(asked) and "sqlPatternTool" in offered:
            return say(
                f"{DEMO_LABEL}\n\nLet me query the database.",
                reasoning=f"The user asks for data (“{asked[:80]}”). sqlPatternTool turns "
                "such a request into a read-only query over this brand's shop database.",
                tool_calls=[{"name": "sqlPatternTool", "arguments": {"input": asked}}],
            )
        if "searchDocuments" in offered:
            return say(
                f"{DEMO_LABEL}\n\nLet me look that up in the brand's documents.",
                reasoning="This is not a question about rows in the database; the brand's "
                "documents (policies, shipping, support) may answer it.",
                tool_calls=[{"name": "searchDocuments", "arguments": {"query": asked}}],
            )
        return say(
            f"{DEMO_LABEL}\n\nDocument search is off for this chat (`ragEnabled: false`), so "
            "I can only answer from the database. Try **show 10 customers**, **top 5 products "
            "by revenue** or **revenue by month**."
        )
    results = tool_results_since_user(request.messages)
    last: dict[str, Any] = results[-1] if results else {"tool": "", "is_error": True, "value": {}}
    value: dict[str, Any] = last["value"]
    if last["is_error"]:
        return say(f"That did not work: {value.get('error', 'the tool failed')}")
    if last["tool"] == "searchDocuments":
        passages = value.get("passages", [])
        if not passages:
            return say("The documents say nothing about that.")
        lines = [f"- **{p['title']}**: {p['passage']}" for p in passages]
        return say(
            f"Here is what the {value.get('brand')} documents say:\n\n" + "\n".join(lines),
            reasoning="The best passages answer the question; I quote them with their titles.",
        )
    return say(_table(value), reasoning="I show the rows as a table, with the query I ran.")


def _table(result: dict[str, Any]) -> str:
    columns = [c for c in result.get("columns", []) if c not in HIDDEN_COLUMNS]
    rows: list[dict[str, Any]] = result.get("rows", [])
    if not rows:
        return f"No rows for {result.get('request')} in **{result.get('brand')}**."
    shown = rows[:SHOWN_ROWS]
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "".join(
        "| " + " | ".join(str(row.get(c, "")).replace("|", "\\|") for c in columns) + " |\n"
        for row in shown
    )
    more = f" (showing {len(shown)})" if len(rows) > len(shown) else ""
    return (
        f"**{result.get('request', 'Result').capitalize()}** in **{result.get('brand')}**, "
        f"{result.get('rowCount')} row(s){more}:\n\n{head}{body}\n"
        f"```sql\n{result.get('sql')}\n```"
    )


def playground_models() -> dict[str, ScriptedProvider]:
    """The offline models by id (``id=Display name``), the reasoning analyst first."""
    return {
        "scripted:analyst=Analyst (offline demo, shows its reasoning)": ScriptedProvider(
            lambda request: _turn(request, reasons=True), model="analyst"
        ),
        "scripted:quick=Quick (offline demo, no reasoning)": ScriptedProvider(
            lambda request: _turn(request, reasons=False), model="quick"
        ),
    }
