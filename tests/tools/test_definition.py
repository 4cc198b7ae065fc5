"""Declaring tools from typed functions and explicit schemas; scoping them."""

from __future__ import annotations

from typing import Literal

import pytest

from agentstream import ToolContext, Toolset, tool
from agentstream.tools import InvalidArguments, Tool


@tool
async def alert_admin(
    ctx: ToolContext,
    message: str,
    priority: Literal["low", "high"] = "low",
    tags: list[str] | None = None,
) -> dict[str, str]:
    """Alert an administrator about a problem the user reports.

    Use it only for outages.

    Args:
        message: What to tell the administrator.
        priority: How urgent it is.
            High pages someone.
        tags: Labels for the ticket.

    Returns:
        The ticket.
    """
    return {"status": "sent"}


def test_schema_from_signature_and_docstring() -> None:
    assert alert_admin.name == "alert_admin"
    assert alert_admin.description == (
        "Alert an administrator about a problem the user reports.\n\nUse it only for outages."
    )
    assert alert_admin.takes_context
    schema = alert_admin.parameters
    assert schema["required"] == ["message"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert "ctx" not in props
    assert props["message"] == {
        "description": "What to tell the administrator.",
        "title": "Message",
        "type": "string",
    }
    assert props["priority"]["enum"] == ["low", "high"]
    assert props["priority"]["default"] == "low"
    assert props["priority"]["description"] == "How urgent it is. High pages someone."
    assert props["tags"]["description"] == "Labels for the ticket."


def test_validation_coerces_and_reports() -> None:
    assert alert_admin.validate({"message": "down"}) == {
        "message": "down",
        "priority": "low",
        "tags": None,
    }
    with pytest.raises(InvalidArguments, match="priority: Input should be 'low' or 'high'"):
        alert_admin.validate({"message": "down", "priority": "urgent"})


def test_decorator_options() -> None:
    @tool(name="lookup", description="Find a thing.", timeout=3)
    def find(thing: str) -> str:
        return thing

    assert (find.name, find.description, find.timeout, find.takes_context) == (
        "lookup",
        "Find a thing.",
        3,
        False,
    )


def test_var_args_are_rejected() -> None:
    with pytest.raises(TypeError, match="cannot be described"):

        @tool
        def bad(*names: str) -> str:
            return ""


def test_explicit_schema_tool_validates_with_json_schema() -> None:
    t = Tool.from_schema(
        name="get_rule",
        description="Fetch a rule.",
        parameters={
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}},
            "required": ["id"],
        },
        function=lambda id: id,
    )
    assert t.validate({"id": "x"}) == {"id": "x"}
    with pytest.raises(InvalidArguments, match="'id' is a required property"):
        t.validate({})


def test_toolset_resolves_global_then_scopes_without_duplicates() -> None:
    @tool
    def search() -> str:
        """Global search."""
        return ""

    @tool
    def report_tool() -> str:
        """Page tool."""
        return ""

    @tool
    def article_tool() -> str:
        """Tab tool."""
        return ""

    toolset = Toolset([search])
    toolset.add(report_tool, scope="page:reports")
    toolset.add(search, scope="page:reports")  # already global: not listed twice
    toolset.scoped("page:reports/tab:articles", "workflow")(article_tool)
    names = [t.name for t in toolset.resolve(["page:reports", "page:reports/tab:articles"])]
    assert names == ["search", "report_tool", "article_tool"]
    assert [t.name for t in toolset.resolve(["workflow"])] == ["search", "article_tool"]
    assert [t.name for t in toolset.resolve()] == ["search"]
    assert [t.name for t in toolset.resolve(["unknown"])] == ["search"]


def test_a_display_that_is_not_a_function_is_refused_where_the_tool_is_declared() -> None:
    with pytest.raises(TypeError, match=r"display must be a function of the call's arguments"):

        @tool(display="Drawing the chart…")  # type: ignore[arg-type]
        def draw() -> str:
            """Draw."""
            return "drawn"
