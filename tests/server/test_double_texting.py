"""A message sent while its conversation's answer is still streaming: ``reject``, ``queue`` or
``interrupt``, chosen by the deployment (``AGENTSTREAM_DOUBLE_TEXTING``) or the request, on a
real server with a real SQLite store. Across two worker processes: test_double_texting_workers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.messages import AssistantMessage, Message, UserMessage
from agentstream.providers.registry import ModelRegistry
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.app import create_app
from agentstream.server.settings import Settings, SettingsError
from tests.server.helpers import WAIT, LiveServer, wait_until

SCRIPT: dict[str, Any] = {
    "rules": [
        {"match": "slow", "turns": [{"text": ["tick "] * 400, "delay": 0.05}]},
        {"match": r"^m\d$", "turns": [{"text": ["one ", "two ", "three."], "delay": 0.05}]},
        {"turns": [{"text": ["Noted."]}]},
    ]
}
"""``slow`` streams a word every 50 ms for 20 s: an answer still streaming when the next
message comes; ``m1``, ``m2``... take 150 ms; anything else is answered at once."""

TRAY = "/api/chat/stream"


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider(SCRIPT)


@pytest.fixture
def start(tmp_path: Path, provider: ScriptedProvider) -> Iterator[Any]:
    servers: list[LiveServer] = []

    def serve(**settings: Any) -> LiveServer:
        app = create_app(
            Agent(model=provider),
            settings=Settings(host="127.0.0.1", **settings),
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
            models=ModelRegistry([], discover=False),
        )
        live = LiveServer(app).start()
        servers.append(live)
        return live

    yield serve
    for live in servers:
        live.stop()


@pytest.fixture
def live(start: Any) -> LiveServer:
    server: LiveServer = start()
    return server


def frames_of(response: httpx.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if line.startswith("data: "):
            yield json.loads(line[6:])


def new_conversation(client: httpx.Client) -> str:
    """A conversation with one exchange."""
    with client.stream("POST", TRAY, json={"message": "hello"}) as response:
        frames = list(frames_of(response))
    assert frames[-1]["type"] == "complete"
    cid: str = frames[-1]["payload"]["conversation_id"]
    return cid


class Streaming:
    """A ``slow`` answer in ``cid``, streaming in a thread until it ends; ``frames`` so far."""

    def __init__(self, live: LiveServer, cid: str, **body: Any) -> None:
        self.frames: list[dict[str, Any]] = []
        self.run_id = ""
        self._live, self._body = live, {"message": "slow", "conversation_id": cid, **body}
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        assert self._started.wait(WAIT)

    def _read(self) -> None:
        with (
            self._live.client() as client,
            client.stream("POST", TRAY, json=self._body) as response,
        ):
            assert response.status_code == 200
            self.run_id = response.headers["x-run-id"]
            for frame in frames_of(response):
                self.frames.append(frame)
                if sum(f["type"] == "text_delta" for f in self.frames) == 3:
                    self._started.set()

    def ended(self) -> dict[str, Any]:
        self._thread.join(WAIT)
        assert not self._thread.is_alive()
        return self.frames[-1]


def history_seen(provider: ScriptedProvider, message: str) -> list[Message]:
    """What the model was sent when it answered ``message`` (the last such request)."""
    for request in reversed(provider.requests):
        last = request.messages[-1]
        if isinstance(last, UserMessage) and last.content == message:
            return list(request.messages)
    raise AssertionError(f"the model never answered {message!r}")


def test_reject_is_a_409_naming_the_answer_in_progress_and_stores_nothing(
    live: LiveServer,
) -> None:
    with live.client() as client:
        cid = new_conversation(client)
        first = Streaming(live, cid)
        refused = client.post(TRAY, json={"message": "and this?", "conversation_id": cid})
        assert refused.status_code == 409
        assert refused.json() == {
            "detail": f"An answer is in progress in this conversation (run {first.run_id}): "
            f"stop it first (POST /api/chat/runs/{first.run_id}/cancel), or send the "
            'message with double_texting "queue" or "interrupt"',
            "run_id": first.run_id,
            "stop": f"/api/chat/runs/{first.run_id}/cancel",
        }
        # Nothing of the refused message is stored, and the answer streams on.
        stored = client.get(f"/api/conversations/{cid}").json()["messages"]
        assert [m["content"] for m in stored if m["role"] == "user"] == ["hello", "slow"]
        assert client.post(refused.json()["stop"]).status_code == 202
        assert first.ended()["type"] == "cancelled"
        # Once it has ended, the conversation takes the next message at once.
        with client.stream(
            "POST", TRAY, json={"message": "and this?", "conversation_id": cid}
        ) as response:
            assert list(frames_of(response))[-1]["type"] == "complete"


def test_a_client_that_sends_as_soon_as_it_has_the_answer_is_never_refused(
    live: LiveServer,
) -> None:
    with live.client() as client:
        cid = new_conversation(client)
        for n in range(20):
            with client.stream(
                "POST", TRAY, json={"message": f"again {n}", "conversation_id": cid}
            ) as response:
                assert response.status_code == 200
                assert list(frames_of(response))[-1]["type"] == "complete"


def test_queue_opens_the_stream_at_once_and_answers_after_the_answer_before_it(
    live: LiveServer, provider: ScriptedProvider
) -> None:
    with live.client() as client:
        cid = new_conversation(client)
        first = Streaming(live, cid)
        body = {"message": "next", "conversation_id": cid, "double_texting": "queue"}
        with client.stream("POST", TRAY, json=body) as response:
            assert response.status_code == 200  # the headers came while the first streams
            queued_run = response.headers["x-run-id"]
            stored = client.get(f"/api/conversations/{cid}").json()["messages"]
            assert [m["content"] for m in stored if m["role"] == "user"] == [
                "hello",
                "slow",
                "next",
            ]
            assert not first.frames or first.frames[-1]["type"] == "text_delta"
            stopped = client.post(f"/api/chat/runs/{first.run_id}/cancel")
            assert stopped.status_code == 202
            frames = list(frames_of(response))
        assert first.ended()["type"] == "cancelled"
        assert frames[0]["type"] == "status" and frames[0]["run_id"] == queued_run
        assert frames[-1]["type"] == "complete"
    # The model saw the answer before it, whole as stored, before the queued message.
    seen = history_seen(provider, "next")
    partial = seen[-2]
    assert isinstance(partial, AssistantMessage) and partial.text.startswith("tick tick tick ")
    assert [m.content for m in seen if isinstance(m, UserMessage)] == ["hello", "slow", "next"]


def test_queue_runs_the_messages_one_after_the_other(
    live: LiveServer, provider: ScriptedProvider
) -> None:
    """Three sent at once, all queued: every answer completes, none overlaps another (each
    model call sees every answer before it, whole), in the order they were stored."""
    with live.client() as client:
        cid = new_conversation(client)
        results: dict[int, list[dict[str, Any]]] = {}

        def send(n: int) -> None:
            body = {"message": f"m{n}", "conversation_id": cid, "double_texting": "queue"}
            with live.client() as own, own.stream("POST", TRAY, json=body) as response:
                results[n] = list(frames_of(response))

        threads = [threading.Thread(target=send, args=(n,)) for n in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        assert all(results[n][-1]["type"] == "complete" for n in range(3))
        stored = client.get(f"/api/conversations/{cid}").json()["messages"]
    assert [m["status"] for m in stored] == ["complete"] * 8
    order = [m["content"] for m in stored if m["role"] == "user"]
    # Each answer's model call had every message stored before its own, each with its whole
    # answer.
    for position, message in enumerate(order[1:], start=1):
        seen = history_seen(provider, message)
        assert [m.content for m in seen if isinstance(m, UserMessage)] == order[: position + 1]
        answers = [m.text for m in seen if isinstance(m, AssistantMessage)]
        assert answers == ["Noted."] + ["one two three."] * (position - 1)


def test_interrupt_stops_the_answer_keeps_it_interrupted_and_the_model_sees_it(
    live: LiveServer, provider: ScriptedProvider
) -> None:
    with live.client() as client:
        cid = new_conversation(client)
        first = Streaming(live, cid)
        body = {"message": "stop that", "conversation_id": cid, "double_texting": "interrupt"}
        with client.stream("POST", TRAY, json=body) as response:
            assert response.status_code == 200
            frames = list(frames_of(response))
        assert frames[-1]["type"] == "complete"
        # The first stream ended as a stopped answer ends in this protocol.
        assert first.ended() == {"type": "cancelled"}
        streamed = "".join(f["text"] for f in first.frames if f["type"] == "text_delta")
        stored = client.get(f"/api/conversations/{cid}").json()["messages"]
    assert [(m["role"], m["status"]) for m in stored] == [
        ("user", "complete"),
        ("assistant", "complete"),
        ("user", "complete"),
        ("assistant", "interrupted"),
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    assert stored[3]["content"].startswith(streamed)
    seen = history_seen(provider, "stop that")
    partial = seen[-2]
    assert isinstance(partial, AssistantMessage)
    assert partial.text == stored[3]["content"]


def test_the_deployment_chooses_the_policy_and_a_request_its_own(start: Any) -> None:
    live = start(double_texting="interrupt")
    with live.client() as client:
        cid = new_conversation(client)
        first = Streaming(live, cid)
        body = {"message": "no", "conversation_id": cid, "double_texting": "reject"}
        assert client.post(TRAY, json=body).status_code == 409
        with client.stream(
            "POST", TRAY, json={"message": "instead", "conversation_id": cid}
        ) as response:
            assert list(frames_of(response))[-1]["type"] == "complete"
        assert first.ended() == {"type": "cancelled"}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (TRAY, {"message": "hi", "double_texting": "later"}, "double_texting"),
        ("/agent/stream", {"message": "hi", "double_texting": 1}, "double_texting"),
        ("/v1/agent/chat", {"message": "hi", "double_texting": "QUEUE"}, "double_texting"),
        (
            "/ai-sdk/chat",
            {
                "id": "c1",
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
                "double_texting": "wait",
            },
            "double_texting",
        ),
        (
            "/ag-ui",
            {
                "threadId": "t1",
                "runId": "r1",
                "messages": [{"id": "m1", "role": "user", "content": "hi"}],
                "tools": [],
                "context": [],
                "state": {},
                "forwardedProps": {"doubleTexting": "wait"},
            },
            "forwardedProps.doubleTexting",
        ),
    ],
)
def test_a_policy_that_does_not_exist_is_a_400_naming_the_field(
    live: LiveServer, path: str, body: dict[str, Any], field: str
) -> None:
    with live.client() as client:
        refused = client.post(path, json=body)
    assert refused.status_code == 400
    assert refused.json()["field"] == field
    assert "reject" in refused.json()["detail"]
    assert "interrupt" in refused.json()["detail"]


def test_the_setting_is_checked() -> None:
    settings = Settings.from_env({"AGENTSTREAM_DOUBLE_TEXTING": "Queue"})
    assert settings.double_texting == "queue"
    assert Settings.from_env({}).double_texting == "reject"
    with pytest.raises(SettingsError, match="must be reject, queue or interrupt, not 'later'"):
        Settings.from_env({"AGENTSTREAM_DOUBLE_TEXTING": "later"}).check()


def test_a_stop_reaches_a_queued_message_while_it_waits(live: LiveServer) -> None:
    with live.client() as client:
        cid = new_conversation(client)
        first = Streaming(live, cid)
        body = {"message": "next", "conversation_id": cid, "double_texting": "queue"}
        with client.stream("POST", TRAY, json=body) as response:
            queued = response.headers["x-run-id"]
            assert client.post(f"/api/chat/runs/{queued}/cancel").status_code == 202
            frames = list(frames_of(response))
        assert frames[-1] == {"type": "cancelled"}
        # The answer in progress was not touched.
        assert first.frames[-1]["type"] == "text_delta"
        assert client.post(f"/api/chat/runs/{first.run_id}/cancel").status_code == 202
        assert first.ended()["type"] == "cancelled"

        def both_ended() -> bool:
            return client.get(f"/api/conversations/{cid}").json()["active_run"] is None

        assert wait_until(both_ended)


class Reading:
    """A POST streamed in a thread: its ``data:`` frames (JSON, or the text of others). Made
    once ``until(frames)`` holds (``None``: once the response has begun)."""

    def __init__(self, live: LiveServer, path: str, body: dict[str, Any], until: Any) -> None:
        self.frames: list[Any] = []
        self.status = 0
        self.run_id = ""
        self._started = threading.Event()
        self._args = live, path, body, until
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        assert self._started.wait(WAIT)

    def _read(self) -> None:
        live, path, body, until = self._args
        with live.client() as client, client.stream("POST", path, json=body) as response:
            self.status = response.status_code
            self.run_id = response.headers.get("x-run-id", "")
            if until is None:
                self._started.set()
            for line in response.iter_lines():
                if line.startswith("data: "):
                    text = line[6:]
                    self.frames.append(json.loads(text) if text.startswith("{") else text)
                    if until is not None and until(self.frames):
                        self._started.set()
        self._started.set()

    def ended(self) -> list[Any]:
        self._thread.join(WAIT)
        assert not self._thread.is_alive()
        return self.frames


def ai_sdk(text: str, **extra: Any) -> dict[str, Any]:
    message = {"id": f"m-{text}", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": "chat-1", "messages": [message], **extra}


def ag_ui(text: str, *asked: str, **props: Any) -> dict[str, Any]:
    """An AG-UI run input: the thread's messages as its client holds them (each question
    ``asked`` before with the answer it had so far, then ``text``), which the server compares
    with what it stored."""
    earlier = [
        message
        for said in asked
        for message in (
            {"id": f"m-{said}", "role": "user", "content": said},
            {"id": f"a-{said}", "role": "assistant", "content": "tick "},
        )
    ]
    return {
        "threadId": "thread-1",
        "runId": f"r-{text}",
        "messages": [*earlier, {"id": f"m-{text}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": props,
    }


def words(frames: list[Any]) -> bool:
    return sum(isinstance(f, dict) and "tick" in str(f.get("delta", "")) for f in frames) >= 3


def test_the_ai_sdk_interrupts_with_its_body_field_and_ends_the_answer_with_abort(
    live: LiveServer,
) -> None:
    first = Reading(live, "/ai-sdk/chat", ai_sdk("slow"), words)
    second = Reading(live, "/ai-sdk/chat", ai_sdk("and now", double_texting="interrupt"), None)
    assert first.ended()[-2:] == [{"type": "abort", "reason": "new_message"}, "[DONE]"]
    rest = second.ended()
    assert second.status == 200
    assert {"type": "finish", "finishReason": "stop"}.items() <= rest[-2].items()


def test_ag_ui_queues_with_its_forwarded_prop(live: LiveServer, provider: ScriptedProvider) -> None:
    first = Reading(live, "/ag-ui", ag_ui("slow"), words)
    second = Reading(live, "/ag-ui", ag_ui("next", "slow", doubleTexting="queue"), None)
    assert not second.frames  # its stream is open and waits
    with live.client() as client:
        stopped = client.post(f"/api/chat/runs/{first.run_id}/cancel")
    ends = [f for f in first.ended() if f["type"] == "RUN_FINISHED"]
    assert ends[0]["outcome"] == {"type": "cancelled"}
    assert [f["type"] for f in second.ended()][-1] == "RUN_FINISHED"
    assert second.status == 200 and stopped.status_code == 202
    seen = history_seen(provider, "next")
    assert isinstance(seen[-2], AssistantMessage) and seen[-2].text.startswith("tick ")
