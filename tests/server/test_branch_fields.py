"""The chat tray, ops agent and workflow assistant branch a conversation with two optional
fields of their own, ``parent_message_id`` and ``regenerate``, on a real server with a real
store; clients that never send them (every other test of these protocols) see no change."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.messages import UserMessage
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, stream_text

DIALECTS = {
    "tray": ("/api/chat/stream", {}),
    "ops": ("/agent/stream", {}),
    "workflow": ("/v1/agent/chat", {"context_type": "workflow", "conversation_id": "wf-1"}),
}


class Chat:
    """One dialect's client on a live server whose model answers ``re: <question> #n``."""

    def __init__(self, serve: Serve, tmp_path: Path, dialect: str) -> None:
        self.count = itertools.count(1)
        self.provider = ScriptedProvider(self.turn)
        store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'b.db'}"))
        self.live: LiveServer = serve(Agent(model=self.provider), store=store)
        self.live.call(upgrade(store.engine), timeout=60)
        self.path, self.extra = DIALECTS[dialect]
        self.conversation: str | None = None
        """The stored conversation's id (the API's), once there is one."""

    def turn(self, request: ChatRequest) -> dict[str, Any]:
        asked = [m.content for m in request.messages if isinstance(m, UserMessage)]
        return {"text": f"re: {asked[-1]} #{next(self.count)}"}

    def seen(self) -> list[str]:
        """What the model was sent last, as text."""
        last = self.provider.requests[-1].messages
        return [getattr(m, "content", None) or getattr(m, "text", "") for m in last]

    def send(self, **body: Any) -> Any:
        wanted = dict(self.extra)
        if self.conversation is not None and "conversation_id" not in wanted:
            wanted["conversation_id"] = self.conversation
        with self.live.client() as client:
            response, _ = stream_text(client, self.path, json={**wanted, **body})
            if self.conversation is None and response.status_code == 200:
                [item] = client.get("/api/conversations").json()["items"]
                self.conversation = item["id"]
        return response

    def shown(self) -> list[dict[str, Any]]:
        with self.live.client() as client:
            detail = client.get(f"/api/conversations/{self.conversation}").json()
        messages: list[dict[str, Any]] = detail["messages"]
        return messages


@pytest.fixture(params=sorted(DIALECTS))
def chat(request: pytest.FixtureRequest, serve: Serve, tmp_path: Path) -> Chat:
    return Chat(serve, tmp_path, request.param)


def test_edit_and_regenerate_with_the_branch_fields(chat: Chat) -> None:
    for message in ("Hi", "Tell a jkoe", "Never mind"):
        assert chat.send(message=message).status_code == 200
    first = chat.shown()
    hi, hello, typo = (m["id"] for m in first[:3])

    # An edit: the new message follows the message before the one it replaces.
    assert chat.send(message="Tell a joke", parent_message_id=hello).status_code == 200
    assert chat.seen() == ["Hi", "re: Hi #1", "Tell a joke"]
    edited = chat.shown()
    assert [m["content"] for m in edited] == [
        "Hi",
        "re: Hi #1",
        "Tell a joke",
        "re: Tell a joke #4",
    ]
    assert edited[2]["siblings"] == [typo, edited[2]["id"]]

    # Another answer to the last question: no message needed.
    assert chat.send(regenerate=True).status_code == 200
    assert chat.seen() == ["Hi", "re: Hi #1", "Tell a joke"]
    again = chat.shown()
    assert [m["content"] for m in again][-1] == "re: Tell a joke #5"
    assert again[3]["siblings"] == [edited[3]["id"], again[3]["id"]]

    # Another answer to a question named by id; then a new start (null: no parent).
    assert chat.send(regenerate=True, parent_message_id=hi).status_code == 200
    assert chat.seen() == ["Hi"]
    assert [m["content"] for m in chat.shown()] == ["Hi", "re: Hi #6"]
    assert chat.send(message="Hey", parent_message_id=None).status_code == 200
    assert chat.seen() == ["Hey"]
    assert chat.shown()[0]["siblings"] == [hi, chat.shown()[0]["id"]]


def test_bad_branch_fields_are_clear_errors(chat: Chat) -> None:
    assert chat.send(message="Hi").status_code == 200
    hi, hello = (m["id"] for m in chat.shown())
    missing = chat.send(message="x", parent_message_id="no-such-message")
    assert missing.status_code == 404 and missing.json()["detail"] == "Message not found"
    answer_again = chat.send(regenerate=True, parent_message_id=hello)
    assert answer_again.status_code == 400
    assert answer_again.json()["field"] == "parent_message_id"
    assert [m["content"] for m in chat.shown()] == ["Hi", "re: Hi #1"]
    if "conversation_id" not in chat.extra:  # a new conversation has nothing to branch
        chat.conversation, kept = None, chat.conversation
        refused = chat.send(message="x", parent_message_id=hi)
        assert refused.status_code == 400 and refused.json()["field"] == "parent_message_id"
        refused = chat.send(regenerate=True)
        assert refused.status_code == 400 and refused.json()["field"] == "regenerate"
        chat.conversation = kept
