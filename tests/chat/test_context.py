from __future__ import annotations

from agentstream.chat.context import context_ids, render_context

WORKFLOW = {
    "workflow_id": "550e8400-e29b-41d4-a716-446655440000",
    "rule_name": "Low Stock Alert",
    "nodes": [{"id": 1}],
}


def test_workflow_context_has_preamble_prominent_ids_and_compact_json() -> None:
    text = render_context(WORKFLOW, preamble="Current workflow:")
    assert text == (
        "Current workflow:\n"
        "**Current workflow ID: `550e8400-e29b-41d4-a716-446655440000`**\n"
        "```json\n"
        '{"workflow_id":"550e8400-e29b-41d4-a716-446655440000","rule_name":"Low Stock Alert",'
        '"nodes":[{"id":1}]}\n'
        "```"
    )


def test_ids_can_be_chosen_or_labelled() -> None:
    context = {"stream_id": 123, "report_id": 456, "is_id": True, "api_key_id": None}
    assert context_ids(context) == [("Current stream ID", "123"), ("Current report ID", "456")]
    assert context_ids(context, ["report_id"]) == [("Current report ID", "456")]
    assert context_ids(context, {"stream_id": "Stream"}) == [("Stream", "123")]
    assert context_ids(context, []) == []


def test_secret_keys_are_redacted_from_the_json() -> None:
    text = render_context({"api_key": "sk-live-abcdefghijklmnop", "page": "x"})
    assert text is not None
    assert "sk-live" not in text
    assert '"api_key":"[redacted]"' in text


def test_a_page_rendering_replaces_the_json() -> None:
    text = render_context({"report_id": 4}, preamble="P", page_text="Report 4: 12 articles.")
    assert text == "P\n**Current report ID: `4`**\nReport 4: 12 articles."


def test_a_string_context_is_shown_as_text_and_empty_context_gives_no_section() -> None:
    assert render_context("The user is an admin.", preamble="P") == "P\nThe user is an admin."
    assert render_context(None) is None
    assert render_context({}) is None
    assert render_context("  ") is None


async def test_a_workflows_settings_reach_the_model_as_the_client_sent_them() -> None:
    from agentstream import Agent

    from .helpers import provider_of, run_chat, scripted

    agent = Agent(model=scripted({"text": "ok"}))
    node = {"signature": "HMAC-SHA256", "token_limit": 500, "auth_required": True}
    context = {
        "workflow_id": "w1",
        "nodes": [{"config": node}],
        "api_key": "sk-live-0123456789abcdef",
    }
    await run_chat(agent, context=context)
    system = provider_of(agent).requests[0].system or ""
    assert '"signature":"HMAC-SHA256"' in system
    assert '"token_limit":500' in system
    assert '"auth_required":true' in system
    assert "sk-live" not in system
