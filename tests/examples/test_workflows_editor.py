"""The workflow example's editor: a rule opened in an interactive view, edited and validated
again in place through the views API, on a real uvicorn with JWT auth, a SQLite store, the
example's real backend and its offline demo model."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentstream.chat import ChatHooks
from agentstream.server.auth import authenticator_from_settings
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine, upgrade
from examples.workflows.app import build
from examples.workflows.demo import demo_model
from examples.workflows.editor import EDITOR
from tests.server.conftest import Serve
from tests.server.helpers import SECRET, LiveServer, bearer, datas, parse_sse, stream_text, token

ALICE = bearer(token("alice"))
URI = "ui://agentstream/open_workflow_editor"


@pytest.fixture
def server(serve: Serve, tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(host="127.0.0.1", jwt_secret=SECRET)
    agent, chat, extras = build(
        database=tmp_path / "workflows.sqlite",
        authenticator=authenticator_from_settings(settings),
        model=demo_model(),
    )
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"))
    live = serve(agent, hooks=ChatHooks(chat), server=extras, store=store, auth=True)
    live.call(upgrade(store.engine), timeout=60)
    yield live
    live.call(store.close())


def check(server: LiveServer, conversation: str, workflow: Any, rule: str) -> Any:
    body = {
        "source": "agentstream",
        "uri": URI,
        "name": "check_edited_workflow",
        "arguments": {"workflow": workflow, "workflow_id": rule},
    }
    with server.client(headers=ALICE) as client:
        response = client.post(f"/api/conversations/{conversation}/views/calls", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_rule_opens_in_the_editor_and_is_validated_again_in_place(server: LiveServer) -> None:
    with server.client(headers=ALICE) as client:
        response, text = stream_text(
            client, "/api/chat/stream", json={"message": "Edit the Large Order Review rule"}
        )
        assert response.status_code == 200, text
        complete = datas(parse_sse(text))[-1]["payload"]
        [view] = [p for p in complete["payloads"] if p["type"] == "mcp_app"]
        conversation = complete["conversation_id"]
        document = client.get(
            f"/api/conversations/{conversation}/views/document",
            params={"source": "agentstream", "uri": URI},
        )
    assert "Validate" in complete["message"]
    assert view["data"]["tool"] == "open_workflow_editor"
    opened = view["data"]["result"]["structuredContent"]
    workflow, rule = opened["workflow"], opened["workflow_id"]
    assert workflow["name"] == "Large Order Review"
    assert workflow["edges"][0]["source_action"] is None
    assert document.status_code == 200
    assert document.json()["html"] == EDITOR.resource(URI).html

    unchanged = check(server, conversation, workflow, rule)
    assert unchanged["structuredContent"]["valid"] is True, unchanged

    broken = copy.deepcopy(workflow)
    broken["actions"][0]["config"] = {"no_such_field": 1}
    refused = check(server, conversation, broken, rule)["structuredContent"]
    assert refused["valid"] is False
    assert any(broken["actions"][0]["name"] in e for e in refused["errors"]), refused

    renamed = {**workflow, "name": "Large Order Review (edited)"}
    assert check(server, conversation, renamed, rule)["structuredContent"]["valid"] is True
    # Nothing was saved: validating is a dry run.
    with server.client(headers=ALICE) as client:
        rules = client.get("/example-api/v1/workflow/rules").json()
    assert "Large Order Review" in {r["name"] for r in rules}
    assert "Large Order Review (edited)" not in {r["name"] for r in rules}
