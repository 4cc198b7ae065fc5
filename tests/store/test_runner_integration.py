"""The lead's run pipeline (``agentstream.runs.Runner``) on the SQL store, on both databases:
the user message is durable before the model is called, and a failed or cancelled run keeps
what the assistant had produced."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from agentstream import Agent
from agentstream.events import (
    ConversationSaved,
    RunCancelled,
    RunCompleted,
    RunFailed,
    TextDelta,
)
from agentstream.messages import UserMessage
from agentstream.principal import Principal
from agentstream.providers.base import ChatRequest, ProviderEvent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import ProtocolOptions, Runner, RunRequest
from agentstream.store import SqlConversationStore


class CheckingProvider:
    """A scripted model that, before answering, reads the store as another request would."""

    name = "scripted"
    model = "checking"

    def __init__(self, store: SqlConversationStore, principal: Principal, script: Any) -> None:
        self.inner = ScriptedProvider(script)
        self.store = store
        self.principal = principal
        self.seen: list[list[str]] = []

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        page = await self.store.list_conversations(self.principal)
        detail = await self.store.get_conversation(self.principal, page.items[0].id)
        self.seen.append([m.content for m in detail.messages if m.role == "user"])
        async for event in self.inner.stream(request):
            yield event


async def test_user_message_is_committed_before_the_model_is_called(
    store: SqlConversationStore, alice: Principal
) -> None:
    provider = CheckingProvider(store, alice, {"turns": [{"text": "Hello there."}]})
    runner = Runner(Agent(model=provider), store=store)
    snapshot = ProtocolOptions(conversation_snapshot=True)
    session = await runner.begin(
        RunRequest(message="First question", principal=alice, protocol=snapshot)
    )
    events = [event async for event in session.events()]
    assert provider.seen == [["First question"]]
    saved, completed = events[-2:]
    assert isinstance(completed, RunCompleted)
    # The conversation as it stands once the answer is committed, just before the end.
    assert isinstance(saved, ConversationSaved) and saved.seq == completed.seq - 1
    assert [m.content for m in saved.conversation.messages] == ["First question", "Hello there."]

    again = await runner.begin(
        RunRequest(message="Second", principal=alice, conversation_id=session.conversation_id)
    )
    events = [event async for event in again.events()]
    assert provider.seen[-1] == ["First question", "Second"]
    # A protocol that does not ask for the snapshot is not sent one (it costs a read).
    assert not [e for e in events if isinstance(e, ConversationSaved)]
    assert isinstance(events[-1], RunCompleted)
    # The model got the stored history, then the new message.
    request = provider.inner.requests[-1]
    assert [m for m in request.messages if isinstance(m, UserMessage)][-2:] == [
        UserMessage(content="First question"),
        UserMessage(content="Second"),
    ]


async def test_provider_failure_keeps_the_partial_answer(
    store: SqlConversationStore, alice: Principal
) -> None:
    script = {
        "turns": [
            {
                "text": ["Part ", "one ", "and ", "more"],
                "error": {"kind": "overloaded", "message": "Try later.", "after": 2},
            }
        ]
    }
    runner = Runner(Agent(model=ScriptedProvider(script)), store=store)
    session = await runner.begin(RunRequest(message="Go", principal=alice))
    events = [event async for event in session.events()]
    assert isinstance(events[-1], RunFailed)
    assert session.conversation_id is not None
    detail = await store.get_conversation(alice, session.conversation_id)
    assert [(m.role, m.content, m.status) for m in detail.messages] == [
        ("user", "Go", "complete"),
        ("assistant", "Part one ", "failed"),
    ]
    assert detail.messages[1].error


async def test_cancelled_run_keeps_the_partial_answer(
    store: SqlConversationStore, alice: Principal
) -> None:
    script = {"turns": [{"text": ["tick "] * 200, "delay": 0.01}]}
    runner = Runner(Agent(model=ScriptedProvider(script)), store=store)
    session = await runner.begin(RunRequest(message="Count", principal=alice))
    ticks = 0
    last = None
    async for event in session.events():
        last = event
        if isinstance(event, TextDelta):
            ticks += 1
            if ticks == 3:
                assert runner.cancel(session.run_id, alice)
    assert isinstance(last, RunCancelled)
    assert session.conversation_id is not None
    detail = await store.get_conversation(alice, session.conversation_id)
    user, answer = detail.messages
    assert (user.content, answer.status) == ("Count", "interrupted")
    assert answer.content.startswith("tick tick tick ")
    assert len(answer.content) < len("tick ") * 200


async def test_a_run_that_cannot_start_is_failed_and_leaves_nothing_open(
    store: SqlConversationStore, alice: Principal
) -> None:
    """The user message is already stored when the model turns out to be unusable: the run
    is recorded as failed (not "running" forever) and the broker holds nothing for it."""
    from agentstream.runs import LocalBroker, RunNotFound

    broker = LocalBroker(keep=1)
    runner = Runner(Agent(model="nosuch:model"), store=store, broker=broker)
    await runner.start()
    with pytest.raises(ValueError, match="unknown model id"):
        await runner.begin(RunRequest(message="Hello?", principal=alice, run_id="doomed"))
    page = await store.list_conversations(alice)
    detail = await store.get_conversation(alice, page.items[0].id)
    assert [(m.role, m.content, m.status) for m in detail.messages] == [
        ("user", "Hello?", "complete"),
        ("assistant", "", "failed"),
    ]
    assert not runner.cancel("doomed", alice)
    with pytest.raises(RunNotFound):  # the broker keeps nothing for a run that never started
        await anext(broker.replay("doomed", alice))
    await runner.aclose()
