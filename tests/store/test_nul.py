"""NUL characters are dropped on the way into the store, on SQLite and PostgreSQL alike
(PostgreSQL cannot hold them in text): nothing fails, and the run still ends."""

from __future__ import annotations

from agentstream import Agent
from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage, UserMessage
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner, RunRequest
from agentstream.store import SqlConversationStore


async def test_nul_in_a_message_an_answer_and_metadata(
    store: SqlConversationStore, alice: Principal
) -> None:
    provider = ScriptedProvider({"turns": [{"text": ["Zero\x00", " byte"]}]})
    runner = Runner(Agent(model=provider), store=store)
    session = await runner.begin(
        RunRequest(message="nul\x00here", principal=alice, metadata={"k\x00": "v\x00"})
    )
    events = [event async for event in session.events()]
    assert isinstance(events[-1], RunCompleted)
    assert session.conversation_id is not None
    history = await store.history(alice, session.conversation_id)
    assert history == [UserMessage(content="nulhere"), AssistantMessage(text="Zero byte")]
    detail = await store.get_conversation(alice, session.conversation_id)
    assert detail.summary.title == "nul here"
    assert detail.metadata == {"k": "v"}
    assert [m.status for m in detail.messages] == ["complete", "complete"]
