"""The ops example through the agent API (``POST /agent/stream``): sign in, the main story
(check a service, alert the admin, a ticket in the example's database listed over its REST
API), continuing the conversation, and the ``tool_fallback`` warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from examples.ops.app import build
from tests.attachments import samples
from tests.examples.conftest import Example, ServeExample
from tests.server.helpers import ISO_MS, UUID, datas, parse_sse, stream_text

PATH = "/agent/stream"
REPORT = "The billing page is down for customers"


def sign_in(client: httpx.Client, name: str = "maria") -> None:
    response = client.post(
        "/example-api/sign-in",
        data={"username": name, "password": "oncall-demo", "next": "/"},
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    assert "agentstream_session" in client.cookies


def frames(client: httpx.Client, **body: Any) -> list[dict[str, Any]]:
    response, text = stream_text(client, PATH, json=body)
    assert response.status_code == 200, text
    return datas(parse_sse(text))


@pytest.fixture
def client(serve_example: ServeExample) -> Any:
    server = serve_example(build)
    with server.client() as c:
        yield c


def test_chat_and_api_need_a_session(client: httpx.Client) -> None:
    page = client.get("/example-api/sign-in")
    assert page.status_code == 200 and '<form method="post"' in page.text
    refused = client.post(PATH, json={"message": REPORT})
    assert refused.status_code == 401
    assert "/example-api/sign-in" in refused.text
    assert client.get("/example-api/tickets").status_code == 401
    wrong = client.post("/example-api/sign-in", data={"username": "maria", "password": "guess"})
    assert wrong.status_code == 401 and "Wrong name or password." in wrong.text
    client.cookies.set("agentstream_session", "x" * 43)
    assert client.post(PATH, json={"message": "hi"}).status_code == 401


def test_sign_in_only_returns_to_this_site(client: httpx.Client) -> None:
    response = client.post(
        "/example-api/sign-in",
        data={"username": "sam", "password": "oncall-demo", "next": "//evil.example/x"},
        follow_redirects=False,
    )
    assert response.headers["location"] == "/"


def test_main_story_opens_a_ticket_listed_by_the_api(client: httpx.Client) -> None:
    sign_in(client)
    events = frames(client, message=REPORT)
    start = events[0]
    assert start["type"] == "start"
    assert start["user_id"] == "maria"
    assert start["conversation_id"] == UUID
    assert start["tools_enabled"] is True
    assert start["tool_names"] == ["alert_admin", "check_service", "list_services"]
    kinds = [e["type"] for e in events]
    assert kinds[-2:] == ["conversation", "done"]
    assert "warning" not in kinds
    tools = [e for e in events if e["type"] in ("tool_start", "tool_end")]
    assert [(e["type"], e["tool_name"]) for e in tools] == [
        ("tool_start", "check_service"),
        ("tool_end", "check_service"),
        ("tool_start", "alert_admin"),
        ("tool_end", "alert_admin"),
    ]
    assert tools[0]["display"] == "Checking billing…"
    assert tools[1]["display"] == "billing: degraded, 2400 ms"
    assert tools[2]["display"] == "Alerting the admin (high)…"
    assert tools[2]["args"]["priority"] == "high"
    assert tools[2]["ts"] == ISO_MS
    end = tools[3]
    ticket_id = end["result"]["ticket_id"]
    assert end["result"] == {"status": "sent", "ticket_id": ticket_id, "priority": "high"}
    assert end["display"] == f"Admin alerted: ticket #{ticket_id} (high)"
    text = "".join(e["content"] for e in events if e["type"] == "token")
    assert "Offline demo" in text
    assert f"ticket **#{ticket_id}** is open" in text
    conversation = events[-2]["conversation"]
    assert conversation["id"] == start["conversation_id"]
    assert [m["role"] for m in conversation["conversation"]] == ["user", "assistant"]

    listed = client.get("/example-api/tickets").json()["tickets"]
    assert [t["id"] for t in listed] == [ticket_id]
    ticket = listed[0]
    assert ticket["opened_by"] == "maria"
    assert ticket["conversation_id"] == start["conversation_id"]
    assert ticket["status"] == "open"
    assert "billing is degraded" in ticket["message"]
    assert REPORT in ticket["message"]
    assert client.get(f"/example-api/tickets/{ticket_id}").json() == ticket
    assert client.get("/example-api/tickets/999").status_code == 404
    closed = client.post(f"/example-api/tickets/{ticket_id}/close").json()
    assert closed["status"] == "closed"
    assert client.get("/example-api/tickets?status=open").json() == {"tickets": []}
    assert client.get("/example-api/tickets?status=pending").status_code == 422


def test_conversation_continues_by_id_and_stays_its_owners(
    client: httpx.Client, serve_example: ServeExample
) -> None:
    sign_in(client)
    first = frames(client, message=REPORT)
    conversation_id = first[0]["conversation_id"]
    ticket_id = next(e for e in first if e["type"] == "tool_end" and e["result"].get("ticket_id"))
    again = frames(client, message="Any update on the ticket?", conversation_id=conversation_id)
    assert again[0]["conversation_id"] == conversation_id
    text = "".join(e["content"] for e in again if e["type"] == "token")
    assert f"Ticket #{ticket_id['result']['ticket_id']}" in text
    messages = again[-2]["conversation"]["conversation"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    # Sam, signed in on another browser, cannot read or continue Maria's conversation.
    with httpx.Client(base_url=str(client.base_url), timeout=10) as other:
        sign_in(other, "sam")
        stolen = other.post(PATH, json={"message": "hi", "conversation_id": conversation_id})
        assert stolen.status_code == 404
        assert other.get(f"/api/conversations/{conversation_id}").status_code == 404


def test_monitoring_outage_gives_the_tool_fallback_warning(client: httpx.Client) -> None:
    sign_in(client)
    assert client.put("/example-api/monitoring", json={"online": False}).json() == {"online": False}
    assert client.put("/example-api/monitoring", json={"online": "maybe"}).status_code == 422
    assert client.put("/example-api/monitoring", json={"online": "yes"}).status_code == 422
    events = frames(client, message=REPORT)
    assert [e["type"] for e in events][:2] == ["start", "warning"]
    assert events[0]["tools_enabled"] is False and events[0]["tool_names"] == []
    assert events[1] == {
        "type": "warning",
        "code": "tool_fallback",
        "message": "Tool-enabled streaming encountered an issue. Continuing without tools.",
    }
    assert not any(e["type"] == "tool_start" for e in events)
    text = "".join(e["content"] for e in events if e["type"] == "token")
    assert "tools are unavailable" in text
    assert client.get("/example-api/tickets").json() == {"tickets": []}
    client.put("/example-api/monitoring", json={"online": True})
    back = frames(client, message=REPORT)
    assert "warning" not in [e["type"] for e in back]


def test_bad_alert_arguments_are_a_tool_error_not_a_ticket(serve_example: ServeExample) -> None:
    def build_with_model(directory: Path) -> Example:
        example, chat, extras = build(directory)
        model = ScriptedProvider(
            {
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "alert_admin",
                                "arguments": {"message": "Billing down", "priority": "urgent"},
                            }
                        ]
                    },
                    {"text": "I could not alert the admin."},
                ]
            }
        )
        tools = [*example.toolset.resolve(), *example.tool_sources]
        return Agent(model=model, tools=tools, instructions=example.instructions), chat, extras

    server = serve_example(build_with_model)
    with server.client() as client:
        sign_in(client)
        events = frames(client, message=REPORT)
        error = next(e for e in events if e["type"] == "tool_error")
        assert error["tool_name"] == "alert_admin"
        assert "priority" in error["error"]["message"]
        assert client.get("/example-api/tickets").json() == {"tickets": []}


def test_a_screenshot_sent_with_the_report_is_named_by_the_offline_model(
    serve_example: ServeExample, tmp_path: Path
) -> None:
    server = serve_example(build, data_dir=tmp_path / "files")
    with server.client() as client:
        sign_in(client)
        uploaded = client.post(
            "/api/attachments", files={"file": ("billing-error.png", samples.png(), "image/png")}
        )
        assert uploaded.status_code == 201, uploaded.text
        events = frames(client, message=REPORT, attachments=[uploaded.json()["id"]])
        text = "".join(e["content"] for e in events if e["type"] == "token")
        assert "I got 1 attachment: billing-error.png (an image)." in text
        assert "Let me check the billing service first." in text
        # The web UI shows it again from the stored conversation.
        stored = client.get(f"/api/conversations/{events[0]['conversation_id']}").json()
    (user, *_) = stored["messages"]
    assert [a["name"] for a in user["attachments"]] == ["billing-error.png"]
    assert user["attachments"][0]["media_type"] == "image/png"
