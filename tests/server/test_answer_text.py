"""One answer text: what a client streamed is what the store keeps and what a reload shows,
character for character, in every dialect, with each tool call's ``text_offset`` where its
frames came in the stream.

A property test: arbitrary Markdown and whitespace (indented code, runs of blank lines,
trailing spaces, text the model wrote that looks like a tool marker), split into arbitrary
deltas, over one to four model turns with tool calls between them, through the real server,
the SQLite store and the conversations API (and the AI SDK's own reload endpoint).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentstream import Agent, tool
from agentstream.providers.base import ChatRequest
from agentstream.providers.registry import ModelRegistry
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.server.helpers import LiveServer, Sse, parse_sse

FRAGMENTS = [
    "# Title",
    "    indented code",
    "```python\nx = 1\n```",
    "- item",
    "1. first",
    "**bold** and _em_",
    "`code`",
    "[link](https://example.com/a_b)",
    "> quote",
    "| a | b |\n|---|---|",
    "\n",
    "\n\n",
    "\n\n\n\n",
    "  ",
    "\t",
    " ",
    "word",
    "é",
    "🙂",
    '\\ "quoted"',
    "[[tool:3]]",
    "<b>html</b>",
]

# Any character a model may write, but NUL (which the store drops by design) and CJK (which
# the workflow assistant's language guard answers again, in English).
CHARACTERS = st.characters(
    max_codepoint=0x2FFF, blacklist_categories=("Cs",), blacklist_characters="\x00"
)
TEXT = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(CHARACTERS, max_size=6)), max_size=6
).map("".join)


@st.composite
def chunked(draw: st.DrawFn) -> list[str]:
    """A text split into deltas at arbitrary points."""
    text = draw(TEXT)
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=4)))
    return [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)]) if b > a]


@st.composite
def answers(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One to four model turns; every turn but the last calls one or two tools."""
    count = draw(st.integers(1, 4))
    turns: list[dict[str, Any]] = []
    for position_ in range(count):
        turn: dict[str, Any] = {"text": draw(chunked())}
        if draw(st.booleans()):
            turn["reasoning"] = ["Thinking it over."]
        if position_ < count - 1:
            calls = draw(st.integers(1, 2))
            turn["tool_calls"] = [{"name": "note", "arguments": {"n": n}} for n in range(calls)]
        turns.append(turn)
    return turns


@tool
async def note(n: int) -> str:
    """Take a note.

    Args:
        n: Which one.
    """
    return f"noted {n}"


class Scripts:
    """The turns of each case, found by the user message that names it."""

    def __init__(self) -> None:
        self.cases: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, request: ChatRequest) -> ScriptedTurn:
        message, turn = position(request)
        return ScriptedTurn.model_validate(self.cases[message][turn])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Scripts]]:
    # One server for every example: hypothesis runs the test body many times.
    scripts = Scripts()
    database = tmp_path_factory.mktemp("answers") / "answers.db"
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{database}"))
    agent = Agent(model=ScriptedProvider(scripts), tools=[note])
    settings = Settings(host="127.0.0.1")
    app = create_app(
        agent, settings=settings, store=store, models=ModelRegistry([], discover=False)
    )
    server = LiveServer(app).start()
    try:
        server.call(upgrade(store.engine), timeout=60)
        yield server, scripts
    finally:
        server.call(store.close())
        server.stop()


Streamed = tuple[str, list[int], str]
"""What a client streamed: the text, the position of each tool call's end in it, and the
conversation's id in the store."""


def _stream(client: httpx.Client, path: str, body: Any) -> list[Sse]:
    with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        text = response.read().decode()
    return parse_sse(text.replace("data: [DONE]\n\n", ""))  # the AI SDK's last line


def _read(
    items: Iterable[Any], text_of: Callable[[Any], str | None], ends: Callable[[Any], bool]
) -> tuple[str, list[int]]:
    """The text of ``items`` (frames, messages or parts: ``text_of`` gives an item's text,
    ``None`` for one with none) and where in it each item that ``ends`` a tool call came."""
    text, places = "", []
    for item in items:
        piece = text_of(item)
        if piece is not None:
            text += piece
        elif ends(item):
            places.append(len(text))
    return text, places


def _tray(client: httpx.Client, key: str) -> Streamed:
    frames = [m.data for m in _stream(client, "/api/chat/stream", {"message": key})]
    text, ends, marker_next = "", [], False
    for frame in frames:
        if frame["type"] == "tool_complete":
            ends.append(len(text))
            marker_next = True
        elif frame["type"] == "text_delta":
            if not marker_next:  # the marker after a tool's end is the tray's, not text
                text += frame["text"]
            marker_next = False
    assert frames[-1]["type"] == "complete", frames[-1]
    return text, ends, frames[0]["conversation_id"]


def _ops(client: httpx.Client, key: str) -> Streamed:
    frames = [m.data for m in _stream(client, "/agent/stream", {"message": key})]
    text, ends = _read(
        frames,
        lambda f: f["content"] if f["type"] == "token" else None,
        lambda f: f["type"] in ("tool_end", "tool_error"),
    )
    (saved,) = [f["conversation"] for f in frames if f["type"] == "conversation"]
    assert saved["conversation"][-1]["content"] == text  # the conversation it sends back
    return text, ends, frames[0]["conversation_id"]


def _workflow(client: httpx.Client, key: str) -> Streamed:
    body = {"message": key, "context_type": "workflow", "conversation_id": key}
    messages = _stream(client, "/v1/agent/chat", body)
    text, ends = _read(
        messages,
        lambda m: m.data["chunk"] if m.event == "content_chunk" else None,
        lambda m: m.event == "tool_call_result",
    )
    assert messages[-1].event == "message_complete"
    return text, ends, _titled(client, key)


def _playground(client: httpx.Client, key: str, model: str) -> Streamed:
    body = {"brandRef": "b", "model": model, "content": key, "metadata": {"conversationId": key}}
    messages = _stream(client, "/api/chat/agent-chat/stream?brandRef=b", body)
    text, ends = _read(
        messages,
        lambda m: m.data["delta"] if m.event == "message" else None,
        lambda m: m.event == "tool_result",
    )
    (final,) = [m.data for m in messages if m.event == "final"]
    assert final["content"]["message"] == text  # the final answer is the streamed one
    return text, ends, _titled(client, key)


def _agui(client: httpx.Client, key: str) -> Streamed:
    body = {
        "threadId": key,
        "runId": "r",
        "state": {},
        "messages": [{"id": "u", "role": "user", "content": key}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    frames = [m.data for m in _stream(client, "/ag-ui", body)]
    text, ends = _read(
        frames,
        lambda f: f["delta"] if f["type"] == "TEXT_MESSAGE_CONTENT" else None,
        lambda f: f["type"] == "TOOL_CALL_RESULT",
    )
    finished = frames[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert (finished.get("result") or {}).get("message", "") == text
    return text, ends, _titled(client, key)


def _aisdk(client: httpx.Client, key: str) -> Streamed:
    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": key}]}
    frames = [m.data for m in _stream(client, "/ai-sdk/chat", {"id": key, "messages": [user]})]
    text, ends = _read(
        frames,
        lambda f: f["delta"] if f["type"] == "text-delta" else None,
        lambda f: f["type"] in ("tool-output-available", "tool-output-error"),
    )
    # The SDK's own reload: the stored answer as UI messages.
    reloaded = client.get(f"/ai-sdk/chat/{key}/messages").json()[-1]
    shown, places = _read(
        reloaded["parts"],
        lambda p: p["text"] if p["type"] == "text" else None,
        lambda p: p["type"].startswith("tool-"),
    )
    assert (shown, sorted(places)) == (text, sorted(ends))
    return text, ends, _titled(client, key)


def _titled(client: httpx.Client, title: str) -> str:
    """The id of the newest conversation titled ``title`` (a dialect whose client names its
    conversations keeps them under an id of the server's)."""
    items = client.get("/api/conversations", params={"limit": 20}).json()["items"]
    return str(next(item["id"] for item in items if item["title"] == title))


DIALECTS: dict[str, Callable[..., Streamed]] = {
    "tray": _tray,
    "ops": _ops,
    "workflow": _workflow,
    "playground": _playground,
    "ag-ui": _agui,
    "ai-sdk": _aisdk,
}
_cases = itertools.count()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns=answers())
def test_streamed_text_is_stored_and_reloaded_exactly(
    live: tuple[LiveServer, Scripts], turns: list[dict[str, Any]]
) -> None:
    server, scripts = live
    expected = _joined(turns)
    with server.client() as client:
        model = server.app.state.server.runner.agent.model_id
        for name, stream in DIALECTS.items():
            key = f"case {next(_cases)} {name}"
            scripts.cases[key] = turns
            args = (client, key, model) if name == "playground" else (client, key)
            text, ends, conversation_id = stream(*args)
            assert text == expected, name
            answer = client.get(f"/api/conversations/{conversation_id}").json()["messages"][-1]
            assert answer["content"] == text, name
            offsets = [call["text_offset"] for call in answer["tool_history"]]
            assert sorted(offsets) == sorted(ends), name


def _joined(turns: list[dict[str, Any]]) -> str:
    """The answer as the loop joins its turns: each turn's text, a blank line between."""
    texts = ["".join(turn["text"]) for turn in turns]
    return "\n\n".join(text for text in texts if text)
