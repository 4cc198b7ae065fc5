"""The workflow assistant example through its own protocol (``POST /v1/agent/chat``) on a real
uvicorn, with its scripted offline model, its real SQLite backend and its REST API mounted in
the same server, callers authenticated with JWTs (and forwarded to the backend verbatim)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream.chat import PREVIEW_SENT, ChatHooks
from agentstream.messages import ToolResultsMessage, UserMessage
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.auth import authenticator_from_settings
from agentstream.server.settings import Settings
from examples.workflows.app import build
from examples.workflows.demo import LABEL, demo_model
from tests.server.conftest import Serve
from tests.server.helpers import SECRET, LiveServer, bearer, named, parse_sse, token

CHAT = "/v1/agent/chat"
TRAY = "/api/chat/stream"
API = "/example-api/v1"


class App:
    """The example served with auth, its provider, and helpers to talk to it."""

    def __init__(self, server: LiveServer, provider: ScriptedProvider) -> None:
        self.server = server
        self.provider = provider

    def chat(
        self, message: str, *, user: str = "alice", **body: Any
    ) -> list[tuple[str | None, Any]]:
        payload = {"message": message, "context_type": "workflow", **body}
        with self.server.client() as client:
            reply = client.post(CHAT, json=payload, headers=bearer(token(user)), timeout=30)
        assert reply.status_code == 200, reply.text
        return named(parse_sse(reply.text))

    def api(
        self, method: str, path: str, *, user: str | None = "alice", **kwargs: Any
    ) -> httpx.Response:
        headers = bearer(token(user)) if user else {}
        with self.server.client() as client:
            return client.request(method, API + path, headers=headers, **kwargs)

    def tool_results(self, name: str) -> list[Any]:
        """What the model read from each call of ``name`` so far (each request repeats the
        history, so calls are told apart by their id)."""
        found: dict[str, Any] = {}
        for request in self.provider.requests:
            for message in request.messages:
                if isinstance(message, ToolResultsMessage):
                    for part in message.results:
                        if part.name == name:
                            found[part.tool_call_id] = json.loads(part.content)
        return list(found.values())


@pytest.fixture
def start(serve: Serve, tmp_path: Path) -> Callable[..., App]:
    """``start(model)``: the example with its own fresh database (the offline demo model by
    default); ``tenant_claim`` turns on tenants."""

    def started(model: ScriptedProvider | None = None, tenant_claim: str | None = None) -> App:
        provider = model or demo_model()
        settings = Settings(host="127.0.0.1", jwt_secret=SECRET, tenant_claim=tenant_claim)
        agent, chat, extras = build(
            database=tmp_path / f"workflows-{len(list(tmp_path.iterdir()))}.sqlite",
            authenticator=authenticator_from_settings(settings),
            model=provider,
        )
        server = serve(
            agent, hooks=ChatHooks(chat), server=extras, auth=True, tenant_claim=tenant_claim
        )
        return App(server, provider)

    return started


def _text(events: list[tuple[str | None, Any]]) -> str:
    return "".join(data["chunk"] for name, data in events if name == "content_chunk")


def test_lists_the_rules_from_the_backend_in_the_protocols_frames(
    start: Callable[..., App],
) -> None:
    app = start()
    events = app.chat("Show me my workflow rules")
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_complete"
    calls = [data for name, data in events if name in ("tool_call_start", "tool_call_result")]
    assert calls == [
        {"tool_use_id": calls[0]["tool_use_id"], "name": "list_workflow_rules"},
        {"tool_use_id": calls[0]["tool_use_id"], "name": "list_workflow_rules", "is_error": False},
    ]
    text = _text(events)
    assert text.startswith(LABEL)
    for rule in ("Large Order Review", "New Customer Welcome", "Order Shipped Notification"):
        assert rule in text
    # The model read the summary: five fields per rule, nothing else.
    [rules] = app.tool_results("list_workflow_rules")
    assert {tuple(sorted(r)) for r in rules} == {
        ("entity_name", "id", "is_active", "name", "trigger_type")
    }


def test_summaries_of_action_types_and_alerts(start: Callable[..., App]) -> None:
    app = start()
    app.chat("Create a low stock alert for inventory items")
    [types] = app.tool_results("discover_action_types")
    condition = next(t for t in types if t["name"] == "evaluate_condition")
    assert condition == {
        "name": "evaluate_condition",
        "description": "Compare a field of the record with a value.",
        "config_schema": ["field", "operator", "value"],
        "output_ports": ["output-true", "output-false"],
    }
    events = app.chat("What alerts do I have?")
    [alerts] = app.tool_results("list_my_alerts")
    assert len(alerts) == 2
    assert set(alerts[0]) == {
        "id",
        "title",
        "message",
        "severity",
        "status",
        "created_at",
        "recipients",
    }
    assert alerts[0]["recipients"] == ["alice", "Sales managers"]
    assert "Order 10482 from Globex" in _text(events)


def test_preview_then_approve_creates_the_rule_through_the_backend(
    start: Callable[..., App],
) -> None:
    app = start()
    events = app.chat("Create a low stock alert for inventory items", conversation_id="c1")
    previews = [data for name, data in events if name == "workflow_preview"]
    assert len(previews) == 1
    preview = previews[0]
    assert preview["is_update"] is False and "workflow_id" not in preview
    workflow = preview["workflow"]
    entities = {e["qualified_name"]: e["id"] for e in app.api("GET", "/workflow/entities").json()}
    assert workflow["entity_id"] == entities["inventory.inventory_items"]
    # The 'after' shorthand became edges: a start edge, a named port, a default port.
    assert workflow["edges"] == [
        {"source_action": None, "target_action": "Check Stock"},
        {
            "source_action": "Check Stock",
            "target_action": "Alert Warehouse",
            "source_output": "output-true",
        },
        {
            "source_action": "Alert Warehouse",
            "target_action": "Reorder",
            "source_output": "output-success",
        },
    ]
    # The model got the synthetic result, and nothing was saved yet.
    assert app.tool_results("preview_workflow") == [PREVIEW_SENT]
    names = [r["name"] for r in app.api("GET", "/workflow/rules").json()]
    assert "Low Stock Alert" not in names

    # Approve, as the web UI's card sends it.
    action = {"action": "approve_workflow", "data": {"payload_id": "p1", "payload": preview}}
    with app.server.client() as client:
        reply = client.post(
            TRAY,
            json={"message": "Approve", "interaction_type": "action_executed", "action": action},
            headers=bearer(token("alice")),
            timeout=30,
        )
    complete = json.loads(reply.text.strip().split("data: ")[-1])
    assert "Created the rule “Low Stock Alert”" in complete["payload"]["message"]
    rules = {r["name"]: r for r in app.api("GET", "/workflow/rules").json()}
    saved = app.api("GET", f"/workflow/rules/{rules['Low Stock Alert']['id']}").json()
    assert saved["created_by"] == "alice"
    assert [a["name"] for a in saved["actions"]] == ["Check Stock", "Alert Warehouse", "Reorder"]

    # A second preview of the same rule is refused by the backend's validation: no preview.
    again = app.chat("Create a low stock alert for inventory items")
    assert not [d for n, d in again if n == "workflow_preview"]
    assert "already exists" in _text(again)


def test_an_update_preview_names_the_rule_and_approve_replaces_it(
    start: Callable[..., App],
) -> None:
    workflow = {
        "name": "Large Order Review",
        "description": "Review orders over 20,000.",
        "entity": "sales.orders",
        "trigger_type": "on_create",
        "actions": [
            {
                "name": "Check Total",
                "action_type": "evaluate_condition",
                "config": {"field": "total", "operator": "gt", "value": 20000},
            },
            {
                "name": "Mail Managers",
                "action_type": "send_email",
                "config": {"to": "managers@example.com", "subject": "Large order"},
                "after": "Check Total",
            },
        ],
    }
    arguments = {
        "description": "Raise the threshold",
        "workflow": workflow,
        "workflow_id": "Large Order Review",
    }
    app = start(_script({"name": "preview_workflow", "arguments": arguments}))
    rules = {r["name"]: r["id"] for r in app.api("GET", "/workflow/rules").json()}
    events = app.chat("raise the threshold")
    [preview] = [d for n, d in events if n == "workflow_preview"]
    assert preview["is_update"] is True
    assert preview["workflow_id"] == rules["Large Order Review"]  # the name, resolved
    action = {"action": "approve_workflow", "data": {"payload": preview}}
    with app.server.client() as client:
        reply = client.post(
            TRAY,
            json={"message": "Approve", "interaction_type": "action_executed", "action": action},
            headers=bearer(token("alice")),
            timeout=30,
        )
    assert reply.status_code == 200
    told = [m for m in app.provider.requests[-1].messages if isinstance(m, UserMessage)][-1]
    assert "Outcome: Updated the rule “Large Order Review”" in told.content
    saved = app.api("GET", f"/workflow/rules/{rules['Large Order Review']}").json()
    assert [a["name"] for a in saved["actions"]] == ["Check Total", "Mail Managers"]
    assert saved["description"] == "Review orders over 20,000."
    assert len(app.api("GET", "/workflow/rules").json()) == 3  # replaced, not added


def test_reject_tells_the_model_and_saves_nothing(start: Callable[..., App]) -> None:
    app = start()
    action = {"action": "reject_workflow", "data": {"payload_id": "p1", "payload": {}}}
    with app.server.client() as client:
        reply = client.post(
            TRAY,
            json={"message": "Reject", "interaction_type": "action_executed", "action": action},
            headers=bearer(token("alice")),
            timeout=30,
        )
    assert "nothing was saved" in reply.text
    told = app.provider.requests[-1].messages[-1]
    assert "rejected the preview" in getattr(told, "content", "")
    # What the model is told is not what the user reads.
    [complete] = [f.data for f in parse_sse(reply.text) if f.data.get("type") == "complete"]
    answer = complete["payload"]["message"]
    assert answer.endswith("Understood: nothing was saved. What should I change?")
    assert "Ask what to change" not in answer


def test_the_demo_reads_a_rule_it_is_asked_to_turn_off_and_changes_nothing(
    start: Callable[..., App],
) -> None:
    app = start()
    events = app.chat("Turn off the New Customer Welcome rule")
    calls = [data["name"] for name, data in events if name == "tool_call_start"]
    assert calls == ["get_workflow_rule"]  # not the low stock alert's script
    text = _text(events)
    assert (
        "**New Customer Welcome** is paused" in text or "**New Customer Welcome** is active" in text
    )
    assert "changes no rules" in text or "already" in text
    assert "Low Stock" not in text


@pytest.mark.parametrize(
    ("payload", "told"),
    [
        ({"workflow": {"name": ""}}, "The action failed: the backend refused it"),
        ("not an object", "the approval did not carry the previewed workflow"),
        (
            {"workflow": {"name": "x"}, "is_update": True, "workflow_id": "../../data/tables"},
            "the approval names no valid rule to update",
        ),
    ],
)
def test_a_bad_approval_is_a_failure_the_model_explains(
    start: Callable[..., App], payload: Any, told: str
) -> None:
    app = start()
    action = {"action": "approve_workflow", "data": {"payload": payload}}
    with app.server.client() as client:
        reply = client.post(
            TRAY,
            json={"message": "Approve", "interaction_type": "action_executed", "action": action},
            headers=bearer(token("alice")),
            timeout=30,
        )
    assert told in reply.text


def test_a_draft_built_step_by_step_is_previewed(start: Callable[..., App]) -> None:
    app = start()
    events = app.chat("Build a restock workflow step by step as a draft", conversation_id="d1")
    calls = [d["name"] for n, d in events if n == "tool_call_result"]
    assert calls == [
        "start_draft",
        "add_draft_action",
        "add_draft_action",
        "add_draft_action",
        "preview_draft",
    ]
    assert all(not d["is_error"] for n, d in events if n == "tool_call_result")
    [preview] = [d for n, d in events if n == "workflow_preview"]
    assert [a["name"] for a in preview["workflow"]["actions"]] == [
        "At Reorder Point",
        "Order More",
        "Tell Buyers",
    ]
    assert preview["description"] == "Order 50 more and tell the buyers at the reorder point."


def _script(*calls: dict[str, Any]) -> ScriptedProvider:
    turns = [{"text": "", "tool_calls": [call]} for call in calls]
    return ScriptedProvider({"turns": [*turns, {"text": "Done."}]})


def test_drafts_are_kept_per_conversation(start: Callable[..., App]) -> None:
    draft = {
        "name": "start_draft",
        "arguments": {"name": "D", "entity": "core.customers", "trigger_type": "on_create"},
    }
    add = {
        "name": "add_draft_action",
        "arguments": {
            "name": "Hello",
            "action_type": "send_email",
            "config": {"to": "x", "subject": "y"},
        },
    }
    remove = {"name": "remove_draft_action", "arguments": {"name": "Hello"}}
    model = ScriptedProvider(
        {
            "rules": [
                {"match": "start", "turns": [{"tool_calls": [draft]}, {"text": "Started."}]},
                {"match": "add", "turns": [{"tool_calls": [add]}, {"text": "Added."}]},
                {"match": "remove", "turns": [{"tool_calls": [remove]}, {"text": "Removed."}]},
            ]
        }
    )
    app = start(model)
    app.chat("start", conversation_id="first")
    elsewhere = app.chat("add", conversation_id="second")
    assert [d["is_error"] for n, d in elsewhere if n == "tool_call_result"] == [True]
    assert "call start_draft first" in json.dumps(app.tool_results("add_draft_action")[-1])
    here = app.chat("add", conversation_id="first")
    assert [d["is_error"] for n, d in here if n == "tool_call_result"] == [False]
    assert app.tool_results("add_draft_action")[-1]["draft"]["actions"][0]["name"] == "Hello"
    removed = app.chat("remove", conversation_id="first")
    assert [d["is_error"] for n, d in removed if n == "tool_call_result"] == [False]
    assert app.tool_results("remove_draft_action")[-1]["draft"]["actions"] == []


def test_workflow_id_is_injected_from_the_context_and_names_are_resolved(
    start: Callable[..., App],
) -> None:
    calls = [
        {"name": "get_workflow_rule", "arguments": {"workflow_id": "some name the model made up"}},
        {"name": "list_alerts_for_rule", "arguments": {}},
        {"name": "explain_workflow_node", "arguments": {"action": "Check Total"}},
    ]
    app = start(_script(*calls))
    rules = {r["name"]: r["id"] for r in app.api("GET", "/workflow/rules").json()}
    large = rules["Large Order Review"]
    events = app.chat("explain", context={"workflow_id": large, "rule_name": "Large Order Review"})
    assert [d["is_error"] for n, d in events if n == "tool_call_result"] == [False, False, False]
    [rule] = app.tool_results("get_workflow_rule")
    assert rule["id"] == large
    assert rule["flow"] == ["Start → Check Total", "Check Total --output-true--> Alert Managers"]
    assert len(app.tool_results("list_alerts_for_rule")[0]) == 2
    node = app.tool_results("explain_workflow_node")[0]
    assert node["depth"] == 1 and node["outgoing"] == [
        "Check Total --output-true--> Alert Managers"
    ]
    # The prompt makes the id prominent, after the role, guidance and response blocks.
    system = app.provider.requests[0].system or ""
    assert f"**Current workflow ID: `{large}`**" in system
    assert system.index("You are the workflow assistant") < system.index(
        "| Discovery | `discover_action_types`"
    )
    assert system.index("## How to answer") < system.index("## Current workflow")

    # Without a context, a rule's name is resolved to its id; an unknown name is an error.
    app2 = start(
        _script({"name": "get_workflow_rule", "arguments": {"workflow_id": "new customer welcome"}})
    )
    app2.chat("explain")
    assert app2.tool_results("get_workflow_rule")[0]["name"] == "New Customer Welcome"
    app3 = start(_script({"name": "get_workflow_rule", "arguments": {"workflow_id": "Nope"}}))
    events = app3.chat("explain")
    assert [d["is_error"] for n, d in events if n == "tool_call_result"] == [True]
    assert "no workflow rule named 'Nope'" in app3.tool_results("get_workflow_rule")[0]["error"]


def test_the_demo_explains_a_rule_and_describes_a_table(start: Callable[..., App]) -> None:
    app = start()
    explained = _text(app.chat("Explain the Large Order Review rule"))
    assert "**Large Order Review** (active) runs on_create of `sales.orders`" in explained
    assert "- Check Total --output-true--> Alert Managers" in explained
    described = _text(app.chat("Describe the columns of the stock table", context_type="tables"))
    assert "| reorder_point | integer |" in described
    assert _text(app.chat("Hi there")).startswith(LABEL)


def test_tables_context_has_its_own_tools_and_role(start: Callable[..., App]) -> None:
    app = start()
    events = app.chat("What tables are there?", context_type="tables")
    assert [d["name"] for n, d in events if n == "tool_call_result"] == ["list_tables"]
    assert "`inventory.inventory_items`" in _text(events)
    request = app.provider.requests[0]
    assert {t.name for t in request.tools} == {"list_tables", "describe_table"}
    assert (request.system or "").startswith("You are the data assistant")
    assert "Which tool for what" not in (request.system or "")
    workflow = start()
    workflow.chat("Show me my workflow rules")
    assert len(workflow.provider.requests[0].tools) == 18  # and the editor's own, views only


def test_the_backend_checks_callers_and_keeps_users_and_tenants_apart(
    start: Callable[..., App],
) -> None:
    app = start()
    assert app.api("GET", "/workflow/rules", user=None).status_code == 401
    mine = app.api("GET", "/workflow/alerts/mine").json()
    # Another user has an inbox of their own and cannot open alice's alerts.
    assert app.api("GET", f"/workflow/alerts/{mine[0]['id']}", user="bob").status_code == 404
    assert app.api("GET", f"/workflow/alerts/{mine[0]['id']}").status_code == 200

    # With tenants, another tenant neither lists nor opens this tenant's rules.
    tenants = start(tenant_claim="tenant")
    with tenants.server.client() as client:
        acme = bearer(token("alice", tenant="acme"))
        globex = bearer(token("carol", tenant="globex"))
        created = client.post(API + "/workflow/rules/validate", headers=acme, json={})  # seeds acme
        assert created.status_code == 422
        acme_rules = client.get(API + "/workflow/rules", headers=acme).json()
        rule_id = acme_rules[0]["id"]
        globex_rules = client.get(API + "/workflow/rules", headers=globex).json()
        assert rule_id not in {r["id"] for r in globex_rules}
        assert client.get(f"{API}/workflow/rules/{rule_id}", headers=globex).status_code == 404
        assert client.get(f"{API}/workflow/rules/{rule_id}", headers=acme).status_code == 200


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"actions": [{"name": "A", "action_type": "teleport"}]}, "unknown action_type 'teleport'"),
        (
            {"actions": [{"name": "A", "action_type": "create_alert", "config": {"title": "t"}}]},
            "'severity' is a required property",
        ),
        (
            {
                "edges": [
                    {"source_action": None, "target_action": "A"},
                    {"source_action": "A", "target_action": "A", "source_output": "nowhere"},
                ]
            },
            "has no output port 'nowhere'",
        ),
        (
            {
                "edges": [
                    {"source_action": "A", "target_action": "A", "source_output": "output-true"}
                ]
            },
            "needs a start edge",
        ),
        ({"name": "Large Order Review"}, "already exists"),
    ],
)
def test_the_backend_refuses_invalid_workflows_with_every_reason(
    start: Callable[..., App], change: dict[str, Any], problem: str
) -> None:
    app = start()
    entities = {e["qualified_name"]: e["id"] for e in app.api("GET", "/workflow/entities").json()}
    triggers = {t["name"]: t["id"] for t in app.api("GET", "/workflow/trigger-types").json()}
    body = {
        "name": "Test",
        "entity_id": entities["sales.orders"],
        "trigger_type_id": triggers["on_create"],
        "actions": [
            {
                "name": "A",
                "action_type": "evaluate_condition",
                "config": {"field": "total", "operator": "gt", "value": 1},
            }
        ],
        "edges": [{"source_action": None, "target_action": "A"}],
        **change,
    }
    verdict = app.api("POST", "/workflow/rules/validate", json=body).json()
    assert verdict["valid"] is False
    assert any(problem in e for e in verdict["errors"]), verdict
    refused = app.api("POST", "/workflow/rules", json=body)
    assert refused.status_code == 422
    assert any(problem in e for e in refused.json()["detail"]["errors"])


def test_the_backend_refuses_malformed_bodies_naming_the_field(start: Callable[..., App]) -> None:
    app = start()
    reply = app.api("POST", "/workflow/rules", json={"name": "x", "entity_id": "not-a-uuid"})
    assert reply.status_code == 422
    fields = {tuple(d["loc"]) for d in reply.json()["detail"]}
    assert ("body", "entity_id") in fields and ("body", "actions") in fields
    assert app.api("GET", "/workflow/rules/not-a-uuid").status_code == 422
    missing = "00000000-0000-4000-8000-000000000000"
    assert app.api("GET", f"/workflow/rules/{missing}").status_code == 404
