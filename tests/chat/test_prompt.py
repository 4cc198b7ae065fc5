from __future__ import annotations

import pytest

from agentstream.chat.actions import ClientAction, ServerAction
from agentstream.chat.prompt import (
    CONTEXT_LAST_LAYOUT,
    DEFAULT_LAYOUT,
    build_system_prompt,
    check_layout,
    render_capabilities,
)
from agentstream.tools import tool

PARTS = {
    "identity": "I am the assistant.",
    "tool_guidance": "Use get_rule for rules.",
    "context": "## Context\n{}",
    "payload_manifest": "- `p1` x: y",
    "capabilities": "Tools you can call:\n- `t`: d",
    "custom_instructions": "Be brief.",
    "guidelines": "Interpret, don't dump JSON.",
}


def test_the_default_layout_is_the_trays_section_order() -> None:
    prompt = build_system_prompt(PARTS)
    assert prompt.names == (
        "identity",
        "tool_guidance",
        "context",
        "payload_manifest",
        "capabilities",
        "custom_instructions",
        "guidelines",
    )
    assert prompt.text.startswith("I am the assistant.\n\nUse get_rule for rules.\n\n## Context")
    assert "## Payloads in this conversation\n- `p1` x: y" in prompt.text
    assert "## Capabilities\nTools you can call:" in prompt.text
    assert "## Instructions\nBe brief." in prompt.text
    assert prompt.text.endswith("Interpret, don't dump JSON.")


def test_the_workflow_layout_puts_the_context_last() -> None:
    prompt = build_system_prompt(PARTS, CONTEXT_LAST_LAYOUT)
    assert prompt.names == ("identity", "tool_guidance", "guidelines", "context")
    assert prompt.section("context") == "## Context\n{}"
    assert prompt.section("capabilities") is None


def test_empty_sections_are_left_out() -> None:
    prompt = build_system_prompt({"identity": "Hi.", "context": None, "guidelines": "  "})
    assert prompt.names == ("identity",)
    assert str(prompt) == "Hi."


def test_a_bad_layout_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown prompt section\(s\) \['persona'\]"):
        check_layout(["identity", "persona"])
    with pytest.raises(ValueError, match="twice"):
        check_layout(["identity", "identity"])
    assert check_layout(DEFAULT_LAYOUT) == DEFAULT_LAYOUT


@tool
def lookup(key: str) -> str:
    """Look a key up.

    More detail the capabilities list leaves out.
    """
    return key


async def _noop(_: object) -> None:
    return None


def test_capabilities_list_tools_payloads_actions_and_suggestions() -> None:
    text = render_capabilities(
        tools=[lookup],
        payload_types="PAYLOADS",
        client_actions=[ClientAction(name="close_chat", description="Close the chat")],
        server_actions=[ServerAction(name="apply", handler=_noop)],
        suggestions="SUGGEST",
    )
    assert text == (
        "Tools you can call:\n- `lookup`: Look a key up.\n\n"
        "PAYLOADS\n\n"
        "Actions you can offer the user:\n"
        '- `close_chat` (handler "client"): Close the chat\n'
        '- `apply` (handler "server")\n\n'
        "SUGGEST"
    )
    assert render_capabilities() is None
