"""The store only ever holds a history a vendor accepts, and loses none of it.

Runs with two tool rounds through the real OpenAI SDK against an upstream that refuses an
invalid tool history (:mod:`tests.strict_upstream`), on SQLite and PostgreSQL: the stored
messages are exactly what was said, and the next message of the conversation is accepted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from agentstream import Agent, tool
from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage
from agentstream.principal import Principal
from agentstream.providers.openai import OpenAIProvider
from agentstream.runs import Runner, RunRequest
from agentstream.store import SqlConversationStore
from agentstream.store.history import load_messages
from agentstream.store.models import MessageRow

from ..strict_upstream import StrictUpstream
from .helpers import new_principal


@tool
async def lookup(round: int) -> dict[str, int]:
    """Look something up.

    Args:
        round: Which round of lookups this is.
    """
    return {"round": round}


@pytest.fixture(scope="module")
def upstream() -> Iterator[StrictUpstream]:
    server = StrictUpstream().start()
    yield server
    server.stop()


def strict_agent(upstream: StrictUpstream) -> Agent:
    provider = OpenAIProvider("strict", api_key="sk-test", base_url=upstream.url)
    return Agent(model=provider, tools=[lookup])


async def stored(store: SqlConversationStore, conversation_id: str) -> list[Message]:
    """The raw stored messages, before any repair for the provider."""
    async with store.engine.connect() as connection:
        bodies = await connection.scalars(
            select(MessageRow.body)
            .where(MessageRow.conversation_id == conversation_id)
            .order_by(MessageRow.ordinal, MessageRow.seq)
        )
        return load_messages(list(bodies))


def shape(messages: list[Message]) -> list[str]:
    out = []
    for message in messages:
        match message:
            case UserMessage():
                out.append("user")
            case AssistantMessage(tool_calls=calls) if calls:
                out.append("call:" + ",".join(c.id for c in calls))
            case AssistantMessage():
                out.append("answer")
            case ToolResultsMessage(results=results):
                out.append("result:" + ",".join(r.tool_call_id for r in results))
    return out


async def converse(runner: Runner, principal: Principal, questions: list[str]) -> str:
    conversation_id: str | None = None
    for question in questions:
        session = await runner.begin(
            RunRequest(message=question, principal=principal, conversation_id=conversation_id)
        )
        events = [event async for event in session.events()]
        assert isinstance(events[-1], RunCompleted), events[-1]
        conversation_id = session.conversation_id
    assert conversation_id is not None
    return conversation_id


def expected_shape(turns: int) -> list[str]:
    out: list[str] = []
    for turn in range(turns):
        question = turn + 1
        out += [
            "user",
            f"call:call_{question}_0",
            f"result:call_{question}_0",
            f"call:call_{question}_1",
            f"result:call_{question}_1",
            "answer",
        ]
    return out


async def test_a_conversation_goes_on_after_two_tool_rounds(
    store: SqlConversationStore, upstream: StrictUpstream
) -> None:
    runner = Runner(strict_agent(upstream), store=store)
    principal = new_principal()
    refused_before = len(upstream.refused)
    conversation_id = await converse(runner, principal, ["first", "second", "third"])
    assert upstream.refused[refused_before:] == []
    messages = await stored(store, conversation_id)
    assert shape(messages) == expected_shape(3)
    assert isinstance(messages[-1], AssistantMessage)
    assert messages[-1].text == "Answer to third."


async def test_forty_concurrent_conversations_lose_nothing(
    store: SqlConversationStore, upstream: StrictUpstream
) -> None:
    runner = Runner(strict_agent(upstream), store=store)
    principals = [new_principal() for _ in range(40)]
    refused_before = len(upstream.refused)
    ids = await asyncio.gather(*(converse(runner, p, ["one", "two"]) for p in principals))
    assert upstream.refused[refused_before:] == []
    shapes = [shape(await stored(store, conversation_id)) for conversation_id in ids]
    assert shapes == [expected_shape(2)] * 40


async def test_orphan_tool_results_never_reach_the_model(
    store: SqlConversationStore, upstream: StrictUpstream
) -> None:
    """A history damaged before the fix (a tool round's call lost, its result kept) is
    repaired on the way to the model, so the conversation can go on."""
    principal = new_principal()
    runner = Runner(strict_agent(upstream), store=store)
    conversation_id = await converse(runner, principal, ["first"])
    async with store.engine.begin() as connection:
        rows = (
            await connection.execute(
                select(MessageRow.id, MessageRow.body)
                .where(MessageRow.conversation_id == conversation_id)
                .order_by(MessageRow.ordinal, MessageRow.seq)
            )
        ).all()
        second_call = rows[3]
        assert second_call.body["role"] == "assistant" and second_call.body["tool_calls"]
        await connection.execute(
            MessageRow.__table__.delete().where(MessageRow.id == second_call.id)
        )
    refused_before = len(upstream.refused)
    session = await runner.begin(
        RunRequest(message="second", principal=principal, conversation_id=conversation_id)
    )
    events = [event async for event in session.events()]
    assert isinstance(events[-1], RunCompleted)
    assert upstream.refused[refused_before:] == []
