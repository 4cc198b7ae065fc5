"""A lone UTF-16 surrogate in a JSON body (``"a\\ud800b"`` is valid JSON, but no UTF-8 text
holds it) is a 400 naming its field, like every other bad input, on SQLite and PostgreSQL:
not a 500 from the store's encoder after the request was accepted. Nothing is stored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.helpers import LiveServer
from tests.store.test_e2e_server import live_server

LONE = "\\ud800"
"""A high surrogate with no low one after it, as JSON writes it."""

BODIES = [
    ("/api/chat/stream", f'{{"message": "a{LONE}b"}}', "message"),
    (
        "/api/chat/stream",
        f'{{"message": "hi", "context": {{"page": ["x", "{LONE}"]}}}}',
        "context.page.1",
    ),
    ("/agent/stream", f'{{"message": "{LONE}"}}', "message"),
    ("/agent/stream", f'{{"message": "hi", "context": "x{LONE}"}}', "context"),
    ("/v1/agent/chat", f'{{"message": "a{LONE}", "context_type": "workflow"}}', "message"),
    (
        "/v1/agent/chat",
        f'{{"message": "hi", "context_type": "workflow", "conversation_id": "c{LONE}"}}',
        "conversation_id",
    ),
    (
        "/ag-ui",
        '{"threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [], '
        f'"forwardedProps": {{}}, "messages": [{{"id": "1", "role": "user", "content": "{LONE}"}}]}}',
        "messages.0.content",
    ),
    (
        "/ai-sdk/chat",
        f'{{"id": "c", "messages": [{{"role": "user", "parts": [{{"type": "text", "text": "{LONE}"}}]}}]}}',
        "messages.0.parts.0.text",
    ),
    # A key cannot be named by itself: its object is.
    ("/api/chat/stream", f'{{"message": "hi", "context": {{"{LONE}": 1}}}}', "context"),
]


@pytest.fixture
def live(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url) as server:
        yield server


@pytest.mark.parametrize(("path", "body", "field"), BODIES)
def test_a_lone_surrogate_is_a_400_naming_its_field(
    live: LiveServer, path: str, body: str, field: str
) -> None:
    with live.client() as client:
        before = client.get("/api/conversations", params={"limit": 100}).json()["items"]
        response = client.post(path, content=body, headers={"content-type": "application/json"})
        assert response.status_code == 400, response.text
        assert response.json()["field"] == field
        assert "surrogate" in response.json()["detail"]
        # Nothing stored (the PostgreSQL database is shared with the session's other tests).
        assert client.get("/api/conversations", params={"limit": 100}).json()["items"] == before


def test_a_lone_surrogate_in_a_title_is_a_400(live: LiveServer) -> None:
    with live.client() as client:
        with client.stream("POST", "/agent/stream", json={"message": "status"}) as response:
            response.read()
        conversation = client.get("/api/conversations").json()["items"][0]
        renamed = client.patch(
            f"/api/conversations/{conversation['id']}",
            content=f'{{"title": "x{LONE}"}}',
            headers={"content-type": "application/json"},
        )
        assert renamed.status_code == 400, renamed.text
        assert renamed.json()["field"] == "title"
