"""Pending tool calls kept in the store, on both databases: a run that stops at a frontend
call or an approval leaves its turn open in the stored history; another runner (another
worker, after a restart) continues it from the answers; wrong answers store nothing."""

from __future__ import annotations

import pytest

from agentstream.events import RunCompleted, RunEvent, RunStarted
from agentstream.messages import ToolResultsMessage, UserMessage
from agentstream.pending import (
    Answers,
    ApprovalDecision,
    ClientToolResult,
    InvalidAnswers,
    open_calls,
)
from agentstream.principal import Principal
from agentstream.runs import Runner, RunRequest
from agentstream.store import SqlConversationStore
from tests.agent.pending_helpers import PICK, pending_agent, vendor_problem


async def run(runner: Runner, request: RunRequest) -> list[RunEvent]:
    session = await runner.begin(request)
    return [event async for event in session.events()]


def saved_id(events: list[RunEvent]) -> str:
    """The conversation the store saved the run in (named by its ``run_started``)."""
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert started.conversation_id is not None
    return started.conversation_id


async def test_a_frontend_call_waits_in_the_store_and_another_worker_continues_it(
    store: SqlConversationStore, alice: Principal
) -> None:
    agent, _ = pending_agent()
    events = await run(
        Runner(agent, store=store),
        RunRequest(message="Pick a colour", principal=alice, client_tools=[PICK]),
    )
    done = events[-1]
    assert isinstance(done, RunCompleted) and [p.call_id for p in done.pending_calls] == ["c2"]
    conversation_id = saved_id(events)
    stored = await store.history(alice, conversation_id)
    assert [p.call_id for p in open_calls(stored)] == ["c2"]

    other, _ = pending_agent()  # a fresh worker: nothing in memory
    answers = Answers(results=(ClientToolResult(call_id="c2", content='"teal"'),))
    events = await run(
        Runner(other, store=store),
        RunRequest(message="", principal=alice, conversation_id=conversation_id, answers=answers),
    )
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "You picked it."
    provider = other.provider()
    assert vendor_problem(provider.requests[-1].messages) is None  # type: ignore[attr-defined]
    history = await store.history(alice, conversation_id)
    assert vendor_problem(history) is None and open_calls(history) == ()
    joined = history[2]
    assert isinstance(joined, ToolResultsMessage)
    assert [r.content for r in joined.results] == ["found theme", '"teal"']
    assert history[-1].role == "assistant" and history[-1].text == "You picked it."  # type: ignore[union-attr]
    detail = await store.get_conversation(alice, conversation_id)
    assert [m.content for m in detail.messages if m.role == "user"] == ["Pick a colour"]


async def test_an_approval_is_answered_once_from_any_worker(
    store: SqlConversationStore, alice: Principal
) -> None:
    agent, refunds = pending_agent()
    events = await run(Runner(agent, store=store), RunRequest(message="refund", principal=alice))
    done = events[-1]
    assert isinstance(done, RunCompleted)
    conversation_id = saved_id(events)
    assert [(p.call_id, p.waiting_for) for p in done.pending_calls] == [("r1", "approval")]
    # The conversation as a client opens it (after a reload) shows the call that waits.
    shown = (await store.get_conversation(alice, conversation_id)).to_json()["messages"]
    assert [m["pending_calls"] for m in shown] == [
        [],
        [
            {
                "call_id": "r1",
                "tool_name": "refund",
                "input": {"amount": 500},
                "waiting_for": "approval",
            }
        ],
    ]

    approve = Answers(decisions=(ApprovalDecision(call_id="r1", approved=True),))
    request = RunRequest(
        message="", principal=alice, conversation_id=conversation_id, answers=approve
    )
    other, other_refunds = pending_agent()
    events = await run(Runner(other, store=store), request)
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "Done."
    assert refunds.made == [5] and other_refunds.made == [500]
    shown = (await store.get_conversation(alice, conversation_id)).messages
    assert [m.pending_calls for m in shown] == [(), (), ()]  # answered: nothing waits
    history = await store.history(alice, conversation_id)
    assert vendor_problem(history) is None
    # Answered: the same approval again is refused and runs nothing.
    with pytest.raises(InvalidAnswers, match="no tool calls are waiting"):
        await run(Runner(other, store=store), request)
    assert other_refunds.made == [500]
    assert await store.history(alice, conversation_id) == history


async def test_answers_that_do_not_fit_store_nothing(
    store: SqlConversationStore, alice: Principal
) -> None:
    agent, _ = pending_agent()
    runner = Runner(agent, store=store)
    events = await run(runner, RunRequest(message="refund", principal=alice))
    done = events[-1]
    assert isinstance(done, RunCompleted)
    conversation_id = saved_id(events)
    before = await store.history(alice, conversation_id)
    wrong = Answers(results=(ClientToolResult(call_id="r1", content="yes"),))
    with pytest.raises(InvalidAnswers, match="waits for approval"):
        await run(
            runner,
            RunRequest(message="", principal=alice, conversation_id=conversation_id, answers=wrong),
        )
    assert await store.history(alice, conversation_id) == before
    detail = await store.get_conversation(alice, conversation_id)
    assert len([m for m in detail.messages if m.role == "user"]) == 1


async def test_a_new_message_moves_on_from_open_calls(
    store: SqlConversationStore, alice: Principal
) -> None:
    agent, refunds = pending_agent()
    runner = Runner(agent, store=store)
    events = await run(runner, RunRequest(message="refund", principal=alice))
    done = events[-1]
    assert isinstance(done, RunCompleted)
    conversation_id = saved_id(events)
    events = await run(
        runner, RunRequest(message="Forget it", principal=alice, conversation_id=conversation_id)
    )
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "Fine."
    history = await store.history(alice, conversation_id)
    assert vendor_problem(history) is None and open_calls(history) == ()
    assert UserMessage(content="Forget it") in history
    assert refunds.made == [5]
