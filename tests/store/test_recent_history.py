"""A run reads from the store only the latest whole exchanges its model can be sent
(``history_bound``), on SQLite and PostgreSQL: it starts at a user message, keeps tool calls
with their results and the open calls of the exchange it continues, follows the active
branch, and the store and the conversations API keep every message."""

from __future__ import annotations

from agentstream.events import RunCompleted
from agentstream.messages import (
    AssistantMessage,
    Message,
    PendingToolCall,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore

from .helpers import exchange, new_principal, run_id

WORDS = "word " * 40  # about 200 characters a message


def result(call_id: str, content: str) -> ToolResultPart:
    return ToolResultPart(tool_call_id=call_id, name="lookup", content=content)


def tool_round(n: int) -> list[Message]:
    call = ToolCall(id=f"call-{n}", name="lookup", arguments={"n": n})
    return [
        AssistantMessage(tool_calls=(call,)),
        ToolResultsMessage(results=(result(f"call-{n}", f"found {n} {WORDS}"),)),
        AssistantMessage(text=f"Answer {n}: {WORDS}"),
    ]


async def converse(
    store: SqlConversationStore, alice: Principal, turns: int, conversation_id: str | None = None
) -> str:
    """``turns`` exchanges, each with a tool round. Returns the conversation id."""
    for n in range(turns):
        rid = run_id()
        started = await store.start_run(
            alice, run_id=rid, conversation_id=conversation_id, user_message=f"Q{n} {WORDS}"
        )
        conversation_id = started.conversation_id
        await store.finish_run(
            alice,
            run_id=rid,
            conversation_id=conversation_id,
            messages=tool_round(n),
            status="completed",
            completed=RunCompleted(run_id=rid, seq=3, message=f"Answer {n}"),
            snapshot=False,
        )
    assert conversation_id is not None
    return conversation_id


def questions(history: list[Message]) -> list[str]:
    return [m.content.split()[0] for m in history if isinstance(m, UserMessage)]


def assert_whole(history: list[Message]) -> None:
    """Starts with a user message, and every call has its result right after it."""
    assert isinstance(history[0], UserMessage)
    for position, message in enumerate(history):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            after = history[position + 1]
            assert isinstance(after, ToolResultsMessage)
            answered = {r.tool_call_id for r in after.results}
            answered |= {p.call_id for p in after.pending}
            assert {c.id for c in message.tool_calls} <= answered


async def test_a_long_conversation_reads_only_its_latest_exchanges(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await converse(store, alice, 60)
    started = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="Q60", history_bound=3_000
    )
    read = list(started.history)
    assert 1 < len(questions(read)) < 10
    assert questions(read) == [f"Q{n}" for n in range(60 - len(questions(read)), 60)]
    assert_whole(read)
    # Without a bound, and for the conversations API, nothing is left out.
    assert questions(await store.history(alice, cid)) == [f"Q{n}" for n in range(61)]
    shown = await store.get_conversation(alice, cid)
    assert len([m for m in shown.messages if m.role == "user"]) == 61


async def test_the_bound_is_reached_at_the_start_of_an_exchange(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await converse(store, alice, 20)
    started = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="Q20", history_bound=1
    )
    # The exchange the run continues is read whole, however small the bound.
    assert questions(list(started.history)) == ["Q19"]
    assert len(started.history) == 4
    assert_whole(list(started.history))


async def test_open_calls_are_read_whatever_the_bound(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await converse(store, alice, 10)
    rid = run_id()
    await store.start_run(alice, run_id=rid, conversation_id=cid, user_message="Pick one")
    calls = tuple(ToolCall(id=f"open-{n}", name="pick", arguments={"n": n}) for n in range(3))
    bulky = [
        result(f"done-{n}", "x" * 5_000) for n in range(4)
    ]  # a long exchange: more than the bound on its own
    waiting = tuple(PendingToolCall(call_id=c.id, name="pick") for c in calls)
    done_calls = tuple(ToolCall(id=f"done-{n}", name="lookup") for n in range(4))
    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[
            AssistantMessage(tool_calls=done_calls),
            ToolResultsMessage(results=tuple(bulky)),
            AssistantMessage(tool_calls=calls),
            ToolResultsMessage(results=(), pending=waiting),
        ],
        status="completed",
        completed=RunCompleted(run_id=rid, seq=3, message=""),
        snapshot=False,
    )
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=cid,
        user_message="Never mind",
        history_bound=100,
    )
    read = list(started.history)
    assert questions(read) == ["Pick"]
    last = read[-1]
    assert isinstance(last, ToolResultsMessage)
    assert [p.call_id for p in last.pending] == ["open-0", "open-1", "open-2"]
    assert_whole(read)


async def test_an_edited_question_reads_its_own_branch(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await converse(store, alice, 12)
    shown = await store.get_conversation(alice, cid)
    asked = [m for m in shown.messages if m.role == "user"]
    # Edit question 8: the branch continues after answer 7, not after the last answer.
    branch = await store.branch_for(alice, cid, asked[8].id, again=False)
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=cid,
        user_message="Q8-edited",
        branch=branch,
        history_bound=2_000,
    )
    read = list(started.history)
    assert questions(read)[-1] == "Q7" and len(questions(read)) < 8
    assert_whole(read)
    # The next turn follows the edited branch.
    started = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="Q9b", history_bound=2_000
    )
    assert questions(list(started.history))[-1] == "Q8-edited"
    assert "Q11" not in questions(list(started.history))


async def test_a_short_conversation_is_read_whole(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hello", "Hi")
    cid = await converse(store, alice, 3, cid)
    started = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="Q3", history_bound=1_000_000
    )
    assert questions(list(started.history)) == ["Hello", "Q0", "Q1", "Q2"]


async def test_a_new_conversation_reads_nothing(
    store: SqlConversationStore, alice: Principal
) -> None:
    started = await store.start_run(
        new_principal(), run_id=run_id(), conversation_id=None, user_message="Hi", history_bound=1
    )
    assert list(started.history) == []


async def test_a_queued_run_reads_its_latest_exchanges_again(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await converse(store, alice, 40)
    rid = run_id()
    await store.start_run(alice, run_id=rid, conversation_id=cid, user_message="Q40")
    again = await store.run_context(alice, cid, rid, history_bound=3_000)
    read = list(again.history)
    assert 1 < len(questions(read)) < 10 and questions(read)[-1] == "Q39"
    assert_whole(read)
    assert questions(list((await store.run_context(alice, cid, rid)).history))[0] == "Q0"
