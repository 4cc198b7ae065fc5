"""Concurrent run starts and finishes share write transactions, and one caller's failure
never becomes another's."""

from __future__ import annotations

import asyncio

import pytest

from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage
from agentstream.principal import Principal
from agentstream.runs.store import ConversationNotFound
from agentstream.store import SqlConversationStore, UnknownRun

from .helpers import exchange, new_principal, run_id


async def test_concurrent_starts_share_transactions_and_all_commit(
    store: SqlConversationStore,
) -> None:
    users = [new_principal() for _ in range(40)]
    before = store.write_transactions
    started = await asyncio.gather(
        *(
            store.start_run(user, run_id=run_id(), conversation_id=None, user_message=f"q{n}")
            for n, user in enumerate(users)
        )
    )
    assert store.write_transactions - before < len(users)
    for n, (user, run) in enumerate(zip(users, started, strict=True)):
        detail = await store.get_conversation(user, run.conversation_id)
        assert [(m.role, m.content) for m in detail.messages] == [("user", f"q{n}")]


async def test_a_failing_write_leaves_the_others_of_its_transaction_alone(
    store: SqlConversationStore, alice: Principal
) -> None:
    bob = new_principal()
    mine = await exchange(store, alice, "first", "one")
    theirs = await exchange(store, bob, "private", "secret")
    updated = (await store.get_conversation(alice, mine)).summary.updated_at
    others = [new_principal() for _ in range(10)]

    async def finish_unknown_run() -> None:
        # Bumps alice's conversation, then finds no such run: rolled back.
        rid = run_id()
        await store.finish_run(
            alice,
            run_id=rid,
            conversation_id=mine,
            messages=[AssistantMessage(text="never")],
            status="completed",
            completed=RunCompleted(run_id=rid, seq=1, message="never"),
        )

    async def start_in_bobs_conversation() -> None:
        await store.start_run(alice, run_id=run_id(), conversation_id=theirs, user_message="hi")

    outcomes = await asyncio.gather(
        finish_unknown_run(),
        start_in_bobs_conversation(),
        *(exchange(store, user, "fine", "yes") for user in others),
        return_exceptions=True,
    )
    assert isinstance(outcomes[0], UnknownRun)
    assert isinstance(outcomes[1], ConversationNotFound)
    for user, conversation_id in zip(others, outcomes[2:], strict=True):
        assert isinstance(conversation_id, str)
        detail = await store.get_conversation(user, conversation_id)
        assert [m.content for m in detail.messages] == ["fine", "yes"]
    after = await store.get_conversation(alice, mine)
    assert after.summary.updated_at == updated
    assert [m.content for m in after.messages] == ["first", "one"]
    assert [m.content for m in (await store.get_conversation(bob, theirs)).messages] == [
        "private",
        "secret",
    ]
    # The conversation's counters were not left half-bumped: it goes on normally.
    assert await exchange(store, alice, "second", "two", conversation_id=mine) == mine
    shown = (await store.get_conversation(alice, mine)).messages
    assert [m.content for m in shown] == ["first", "one", "second", "two"]


async def test_a_caller_cancelled_while_queued_leaves_nothing(
    store: SqlConversationStore,
) -> None:
    users = [new_principal() for _ in range(5)]
    tasks = [
        asyncio.create_task(
            store.start_run(user, run_id=run_id(), conversation_id=None, user_message="q")
        )
        for user in users
    ]
    await asyncio.sleep(0)  # every caller has queued its work; none has been taken yet
    tasks[-1].cancel()
    done = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(done[-1], asyncio.CancelledError)
    assert all(not isinstance(d, BaseException) for d in done[:-1])
    page = await store.list_conversations(users[-1])
    assert page.items == ()


def test_group_commit_needs_a_committer() -> None:
    from agentstream.store.commits import AsyncTransactions, GroupCommit
    from agentstream.store.engine import create_engine

    engine = create_engine("sqlite+aiosqlite:///:memory:")
    with pytest.raises(ValueError, match="at least 1"):
        GroupCommit(AsyncTransactions(engine), committers=0)
