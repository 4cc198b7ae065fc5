from __future__ import annotations

import json
from typing import Any

from agentstream.chat.toolhooks import (
    PREVIEW_SENT,
    field_names,
    first_sentence,
    inject_from_context,
    keep_fields,
    names_of,
    preview_interceptor,
    workflow_preview_data,
)
from agentstream.events import Payload
from agentstream.principal import Principal
from agentstream.tools import ToolContext

WORKFLOW_ID = "550e8400-e29b-41d4-a716-446655440000"
OTHER_ID = "9b2f7d8e-0000-4000-8000-000000000001"


def _ctx(context: Any = None) -> ToolContext:
    return ToolContext(
        principal=Principal(user_id="u"),
        run_id="r",
        call_id="c",
        tool_name="get_workflow_rule",
        context=context,
    )


def test_workflow_id_is_injected_when_missing_or_not_a_uuid() -> None:
    prepare = inject_from_context("workflow_id", uuid_only=True)
    ctx = _ctx({"workflow_id": WORKFLOW_ID})
    assert prepare({}, ctx) == {"workflow_id": WORKFLOW_ID}
    assert prepare({"workflow_id": "Low Stock Alert", "x": 1}, ctx) == {
        "workflow_id": WORKFLOW_ID,
        "x": 1,
    }


def test_a_valid_uuid_from_the_model_is_kept() -> None:
    prepare = inject_from_context("workflow_id", uuid_only=True)
    assert prepare({"workflow_id": OTHER_ID}, _ctx({"workflow_id": WORKFLOW_ID})) == {
        "workflow_id": OTHER_ID
    }


def test_without_a_value_in_the_context_the_arguments_stay_as_written() -> None:
    prepare = inject_from_context("workflow_id", uuid_only=True)
    assert prepare({"workflow_id": "Low Stock Alert"}, _ctx({})) == {
        "workflow_id": "Low Stock Alert"
    }
    assert prepare({}, _ctx("not a mapping")) == {}
    assert prepare({}, _ctx({"workflow_id": "not-a-uuid"})) == {}


def test_plain_injection_fills_only_missing_values_from_another_key() -> None:
    prepare = inject_from_context("report", context_key="report_id")
    assert prepare({}, _ctx({"report_id": 7})) == {"report": 7}
    assert prepare({"report": 9}, _ctx({"report_id": 7})) == {"report": 9}


def test_summarizers_shrink_action_types_and_rules_to_their_key_fields() -> None:
    action_types = keep_fields(
        "name",
        "description",
        "config_schema",
        "output_ports",
        transform={
            "description": first_sentence,
            "config_schema": field_names,
            "output_ports": names_of,
        },
    )
    full = [
        {
            "name": "create_alert",
            "description": "Creates an alert. It notifies recipients by e-mail.",
            "config_schema": {"type": "object", "properties": {"title": {}, "severity": {}}},
            "output_ports": [{"name": "success", "x": 1}, {"name": "failure"}],
            "internal": "dropped",
        }
    ]
    assert action_types(full) == [
        {
            "name": "create_alert",
            "description": "Creates an alert.",
            "config_schema": ["title", "severity"],
            "output_ports": ["success", "failure"],
        }
    ]
    rules = keep_fields("id", "name", under="rules")
    assert rules({"rules": [{"id": 1, "name": "a", "nodes": []}], "total": 1}) == {
        "rules": [{"id": 1, "name": "a"}],
        "total": 1,
    }
    assert keep_fields("id")({"id": 2, "secret": 3}) == {"id": 2}
    assert keep_fields("id")("text") == "text"


def test_first_sentence_truncates() -> None:
    assert first_sentence("One two.  Three.") == "One two."
    assert first_sentence("x" * 50, max_chars=10) == "x" * 9 + "…"
    assert first_sentence(None) is None


def test_a_validated_preview_becomes_a_payload_and_a_synthetic_result() -> None:
    intercept = preview_interceptor()
    arguments = {
        "description": "Add low stock alert",
        "workflow": {"name": "Low Stock Alert", "actions": []},
        "workflow_id": WORKFLOW_ID,
    }
    result = intercept({"valid": True}, arguments, _ctx())
    assert result is not None
    assert json.loads(result.text) == PREVIEW_SENT
    assert result.text.startswith('{"status": "preview_sent", "message": "Preview sent to user')
    assert result.payload == Payload(
        kind="workflow_preview",
        data={
            "description": "Add low stock alert",
            "workflow": {"name": "Low Stock Alert", "actions": []},
            "is_update": True,
            "workflow_id": WORKFLOW_ID,
        },
        summary="Workflow preview: Add low stock alert",
    )


def test_a_failed_validation_goes_to_the_model_unchanged() -> None:
    intercept = preview_interceptor()
    assert intercept({"valid": False, "errors": ["no trigger"]}, {}, _ctx()) is None
    assert intercept({"error": "bad"}, {}, _ctx()) is None


def test_workflow_preview_data_prefers_what_the_tool_resolved() -> None:
    resolved = {"name": "Low Stock", "entity_id": "e-1", "edges": []}
    rule = "550e8400-e29b-41d4-a716-446655440000"
    data = workflow_preview_data(
        {"valid": True, "workflow": resolved, "workflow_id": rule},
        {
            "description": "Update it",
            "workflow": {"entity": "inventory.items"},
            "workflow_id": "Low Stock",
        },
    )
    assert data == {
        "description": "Update it",
        "workflow": resolved,
        "is_update": True,
        "workflow_id": rule,
    }
    assert workflow_preview_data({"valid": False, "errors": ["x"]}, {"workflow": {}}) is None
