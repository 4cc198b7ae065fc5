"""A conversation longer than the model's window, through the runner and the store, on SQLite
and PostgreSQL: the model is sent what fits (never a tool call without its result), and the
store keeps every message of the conversation, whatever the model was sent."""

from __future__ import annotations

from agentstream import Agent
from agentstream.messages import UserMessage
from agentstream.providers.openai import OpenAIProvider
from agentstream.providers.profiles import ModelProfiles
from agentstream.runs import Runner
from agentstream.store import SqlConversationStore

from ..strict_upstream import StrictUpstream
from .helpers import new_principal
from .test_history_integrity import converse, expected_shape, lookup, shape, stored

WINDOW = 3_000


async def test_the_store_keeps_what_the_model_no_longer_reads(
    store: SqlConversationStore,
) -> None:
    upstream = StrictUpstream(window=WINDOW).start()
    try:
        provider = OpenAIProvider("strict", api_key="sk-test", base_url=upstream.url)
        profiles = ModelProfiles().with_profiles({"openai:strict": {"context_window": WINDOW}})
        agent = Agent(model=provider, tools=[lookup], max_tokens=200, profiles=profiles)
        questions = [f"Question {n}: " + "q" * 200 for n in range(40)]
        conversation_id = await converse(Runner(agent, store=store), new_principal(), questions)
    finally:
        upstream.stop()

    assert upstream.refused == []
    assert upstream.too_long <= 1
    messages = await stored(store, conversation_id)
    # (The upstream numbers its calls by the user messages it is sent, so ids repeat once
    # earlier exchanges are left out: compare the turns without them.)
    assert [kind.split(":")[0] for kind in shape(messages)] == [
        kind.split(":")[0] for kind in expected_shape(40)
    ]
    assert [m.content for m in messages if isinstance(m, UserMessage)] == questions
    sent = upstream.last["messages"]
    assert len(sent) < len(messages) // 2  # the model read the latest exchanges only
    assert sent[-1]["role"] == "tool" and questions[-1] in str(sent)
