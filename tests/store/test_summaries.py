"""Summaries of a long conversation's start, written by the model and kept by the store, on
SQLite and PostgreSQL: the OpenAI SDK talks to a fake upstream that enforces a window (and
refuses what does not fit with OpenAI's real error), and answers summary requests with a
summary naming the questions it was shown.

A summary is made when a request would leave exchanges out, stored once against the
question that follows it, and sent in the system prompt of every later request; the next
summary extends it with what fell out since, never the whole conversation again. What the
store and the conversations API keep is every message."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select

from agentstream import Agent
from agentstream.agent.summaries import SUMMARY_HEADING, SUMMARY_INSTRUCTIONS
from agentstream.events import ContextSummarized, RunCompleted, RunEvent
from agentstream.messages import UserMessage
from agentstream.principal import Principal
from agentstream.providers._retry import RetryPolicy
from agentstream.providers.openai import OpenAIProvider
from agentstream.providers.profiles import ModelProfiles
from agentstream.runs import Runner, RunRequest
from agentstream.store import SqlConversationStore
from agentstream.store.models import SummaryRow

from ..providers.fakes import openai
from ..providers.fakes.server import FakeUpstream, Recorded, Reply
from ..providers.fakes.window import Window
from .helpers import new_principal
from .test_history_integrity import stored

WINDOW = 4_000
RESERVE = 200
FAST = RetryPolicy(max_attempts=2, initial_delay=0.01, max_delay=0.02)
_QUESTION = re.compile(r"User: (Question \d+)")


class Model:
    """The upstream's answers: a summary request is answered with the questions it shows
    (after the summary so far, which it keeps), anything else with a short answer."""

    def __init__(self) -> None:
        self.summaries: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.fail_summaries = False

    def __call__(self, recorded: Recorded) -> Reply:
        body = recorded.json
        system = body["messages"][0]["content"]
        if system == SUMMARY_INSTRUCTIONS:
            self.summaries.append(body)
            if self.fail_summaries:
                return openai.http_error(500, "The server had an error")
            asked = body["messages"][1]["content"]
            so_far = asked.split("\n\n")[1] if asked.startswith("The summary so far") else ""
            questions = ", ".join(_QUESTION.findall(asked))
            return openai.text(f"{so_far} [{questions}]".strip())
        self.answers.append(body)
        return openai.text("Noted.")


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    server = FakeUpstream().start()
    yield server
    server.stop()


@pytest.fixture
def model(upstream: FakeUpstream) -> Iterator[Model]:
    upstream.reset()
    answers = Model()
    upstream.respond = Window(openai, WINDOW, RESERVE, answer=answers)
    yield answers
    upstream.reset()


def runner_for(upstream: FakeUpstream, store: SqlConversationStore, **agent: Any) -> Runner:
    provider = OpenAIProvider(
        "windowed", api_key="sk-test", base_url=f"{upstream.url}/v1", retry=FAST
    )
    profiles = ModelProfiles().with_profiles({"openai:windowed": {"context_window": WINDOW}})
    return Runner(
        Agent(model=provider, max_tokens=RESERVE, profiles=profiles, **agent), store=store
    )


async def converse(
    runner: Runner, principal: Principal, turns: int, conversation_id: str | None = None
) -> tuple[str, list[list[RunEvent]]]:
    runs: list[list[RunEvent]] = []
    for turn in range(turns):
        session = await runner.begin(
            RunRequest(
                message=f"Question {turn}: " + "word " * 60,
                principal=principal,
                conversation_id=conversation_id,
            )
        )
        events = [event async for event in session.events()]
        assert isinstance(events[-1], RunCompleted), events[-1]
        conversation_id = session.conversation_id
        runs.append(events)
    assert conversation_id is not None
    return conversation_id, runs


async def summary_rows(store: SqlConversationStore, conversation_id: str) -> list[SummaryRow]:
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            select(SummaryRow)
            .where(SummaryRow.conversation_id == conversation_id)
            .order_by(SummaryRow.created_at)
        )
        return list(rows)  # type: ignore[arg-type]


async def test_summaries_are_written_once_kept_and_extended(
    store: SqlConversationStore, upstream: FakeUpstream, model: Model
) -> None:
    alice = new_principal()
    conversation_id, runs = await converse(runner_for(upstream, store), alice, 60)

    # Summarizing is rare: each summary leaves room for the next turns.
    summarized = [e for events in runs for e in events if isinstance(e, ContextSummarized)]
    assert 2 <= len(summarized) <= 12
    assert len(model.summaries) == len(summarized)
    # Each is kept once, in order, each covering more exchanges than the one before.
    rows = await summary_rows(store, conversation_id)
    assert [row.exchanges for row in rows] == [e.exchanges for e in summarized]
    assert [row.text for row in rows] == [e.summary for e in summarized]
    assert all(b.exchanges > a.exchanges for a, b in zip(rows, rows[1:], strict=False))
    # Incremental: a later summary request shows the summary so far and only the questions
    # that fell out after it, never those it already covers.
    for previous, request in zip(summarized, model.summaries[1:], strict=False):
        asked = request["messages"][1]["content"]
        assert asked.startswith(f"The summary so far:\n\n{previous.summary}\n\n")
        shown = [int(q.split()[1]) for q in _QUESTION.findall(asked)]
        assert min(shown) == previous.exchanges
    # The latest summary covers every question from the first on, by the model's own words.
    assert rows[-1].text.startswith("[Question 0, Question 1,")
    # Every later request carries the summary, as a summary, and fits the window.
    last = model.answers[-1]
    system = last["messages"][0]["content"]
    assert f"## {SUMMARY_HEADING}" in system and rows[-1].text in system
    first_sent = next(m for m in last["messages"][1:] if m["role"] == "user")
    assert first_sent["content"].startswith(f"Question {rows[-1].exchanges}: ")
    window: Window = upstream.respond  # type: ignore[assignment]
    assert len(window.refused) <= 1  # the estimate runs low here: learned from once

    # Nothing is lost: the store keeps every message, and the API shows where the model's
    # memory becomes the summary and how full its window is.
    messages = await stored(store, conversation_id)
    assert [m.content for m in messages if isinstance(m, UserMessage)] == [
        f"Question {n}: " + "word " * 60 for n in range(60)
    ]
    detail = (await store.get_conversation(alice, conversation_id)).to_json()
    assert len(detail["messages"]) == 120
    marked = [m for m in detail["messages"] if "summarized" in m]
    assert [m["summarized"] for m in marked] == [rows[-1].exchanges]  # the latest only
    assert marked[0]["content"].startswith(f"Question {rows[-1].exchanges}: ")
    context = detail["context"]
    # (The window, in the server's estimate, is what it learned from the one refusal.)
    assert context["window"] <= WINDOW and context["summarized"] == rows[-1].exchanges
    assert 0 < context["tokens"] <= context["window"] - RESERVE
    assert context["summary"] > 0 and context["history"] > 0


async def test_a_turn_reads_from_the_summary_on(
    store: SqlConversationStore, upstream: FakeUpstream, model: Model
) -> None:
    """After a summary, a run reads the messages after it, not the conversation before."""
    alice = new_principal()
    conversation_id, _ = await converse(runner_for(upstream, store), alice, 30)
    rows = await summary_rows(store, conversation_id)
    assert rows
    started = await store.start_run(
        alice,
        run_id="r-read",
        conversation_id=conversation_id,
        user_message="One more",
        history_bound=10**9,  # as far as the model could read: the summary stops it
    )
    assert started.summary is not None and started.summary.text == rows[-1].text
    first = started.history[0]
    assert isinstance(first, UserMessage)
    assert first.content.startswith(f"Question {rows[-1].exchanges}: ")


async def test_a_failing_summary_leaves_the_exchanges_out_and_the_run_answers(
    store: SqlConversationStore, upstream: FakeUpstream, model: Model
) -> None:
    model.fail_summaries = True
    alice = new_principal()
    conversation_id, runs = await converse(runner_for(upstream, store), alice, 25)
    codes = [e.code for events in runs for e in events if e.type == "warning"]
    assert "context_summary_failed" in codes
    assert await summary_rows(store, conversation_id) == []
    window: Window = upstream.respond  # type: ignore[assignment]
    assert len(window.refused) <= 1  # the estimate runs low here: learned from once


async def test_summaries_can_be_turned_off(
    store: SqlConversationStore, upstream: FakeUpstream, model: Model
) -> None:
    from agentstream.agent import ContextLimits

    runner = runner_for(upstream, store, context_limits=ContextLimits(summarize=False))
    conversation_id, _ = await converse(runner, new_principal(), 25)
    assert model.summaries == []
    assert await summary_rows(store, conversation_id) == []


async def test_a_runner_that_reads_everything_writes_no_summaries(
    store: SqlConversationStore, upstream: FakeUpstream, model: Model
) -> None:
    """It would not be handed the summary, so it would write it again every turn."""
    from agentstream.runs.reading import HistoryReading

    runner = runner_for(upstream, store)
    runner.reading = HistoryReading(whole=True)
    conversation_id, _ = await converse(runner, new_principal(), 25)
    assert model.summaries == []
    assert await summary_rows(store, conversation_id) == []
    assert len(model.answers[-1]["messages"]) < 50  # the oldest exchanges were left out


async def test_another_users_conversation_gets_no_summary(
    store: SqlConversationStore, upstream: FakeUpstream, model: Model
) -> None:
    from agentstream.agent.summaries import ContextSummary
    from agentstream.errors import ConversationNotFound

    alice, mallory = new_principal(), new_principal()
    conversation_id, _ = await converse(runner_for(upstream, store), alice, 2)
    detail = await store.get_conversation(alice, conversation_id)
    question = detail.messages[-2].id
    with pytest.raises(ConversationNotFound):
        await store.save_summary(
            mallory,
            conversation_id=conversation_id,
            run_id="r-x",
            before_id=question,
            summary=ContextSummary(text="forged", exchanges=1),
        )
    async with store.engine.connect() as connection:
        count = await connection.scalar(select(func.count()).select_from(SummaryRow))
    assert not any(row.text == "forged" for row in await summary_rows(store, conversation_id))
    assert count is not None
