"""A conversation's shared state in the store (SQLite and PostgreSQL): the page's state kept
with its message, a run's patches applied to the state as stored, owner and tenant in every
statement, and the state gone with its conversation."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from agentstream.principal import Principal
from agentstream.runs.store import ConversationNotFound
from agentstream.store import SqlConversationStore
from agentstream.store.models import STATES

from .helpers import exchange, new_principal, run_id


async def start(
    store: SqlConversationStore, who: Principal, conversation: str | None, state: dict | None
) -> tuple[str, dict | None]:
    started = await store.start_run(
        who, run_id=run_id(), conversation_id=conversation, user_message="Hi", state=state
    )
    return started.conversation_id, None if started.state is None else dict(started.state)


async def test_the_page_s_state_is_kept_and_the_runs_start_from_the_latest(
    store: SqlConversationStore, alice: Principal
) -> None:
    conversation, state = await start(store, alice, None, {"view": "list"})
    assert state == {"view": "list"}
    assert (await store.get_conversation(alice, conversation)).state == {"view": "list"}
    # A message without a state: the run starts from the stored one.
    _, state = await start(store, alice, conversation, None)
    assert state == {"view": "list"}
    # One with a state replaces it.
    _, state = await start(store, alice, conversation, {"view": "grid", "page": 2})
    assert state == {"view": "grid", "page": 2}
    assert (await store.get_conversation(alice, conversation)).state == {"view": "grid", "page": 2}


async def test_a_run_s_patches_apply_to_the_state_as_stored(
    store: SqlConversationStore, alice: Principal
) -> None:
    conversation, _ = await start(store, alice, None, {"filters": {"year": 2010}, "view": "list"})
    changed = await store.change_state(
        alice, conversation, [{"op": "replace", "path": "/filters/year", "value": 2020}]
    )
    assert changed
    # A page's state stored since (a queued message) and a patch that no longer applies:
    # nothing of it is kept.
    await start(store, alice, conversation, {"view": "grid"})
    kept = await store.change_state(
        alice, conversation, [{"op": "replace", "path": "/filters/year", "value": 2021}]
    )
    assert not kept
    assert (await store.get_conversation(alice, conversation)).state == {"view": "grid"}
    # A conversation without state takes a patch on an empty object.
    bare = await exchange(store, alice, "Hi", "Hello")
    assert (await store.get_conversation(alice, bare)).state is None
    assert await store.change_state(alice, bare, [{"op": "add", "path": "/n", "value": 1}])
    assert (await store.get_conversation(alice, bare)).state == {"n": 1}


async def test_nobody_reads_or_writes_another_s_state(
    store: SqlConversationStore, alice: Principal
) -> None:
    conversation, _ = await start(store, alice, None, {"secret": 1})
    for other in (new_principal(), Principal(user_id=alice.user_id, tenant_id="another")):
        with pytest.raises(ConversationNotFound):
            await store.change_state(other, conversation, [{"op": "remove", "path": "/secret"}])
        with pytest.raises(ConversationNotFound):
            await start(store, other, conversation, {"secret": 2})
        with pytest.raises(ConversationNotFound):
            await store.get_conversation(other, conversation)
    assert (await store.get_conversation(alice, conversation)).state == {"secret": 1}


async def test_the_state_goes_with_its_conversation(
    store: SqlConversationStore, alice: Principal
) -> None:
    conversation, _ = await start(store, alice, None, {"a": 1})
    await store.delete_conversation(alice, conversation)
    async with store.engine.connect() as conn:
        left = await conn.scalar(
            select(func.count()).select_from(STATES).where(STATES.c.conversation_id == conversation)
        )
    assert left == 0
    _, state = await start(store, alice, None, None)
    assert state is None
    with pytest.raises(ConversationNotFound):
        await store.change_state(alice, conversation, [{"op": "add", "path": "/a", "value": 2}])
