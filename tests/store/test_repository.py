"""The store on both databases: the run pipeline's calls and the REST-facing methods."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import update

from agentstream.events import (
    AnswerShaped,
    Payload,
    RunCompleted,
    SuggestedValue,
    ToolHistoryEntry,
    Usage,
)
from agentstream.messages import (
    AssistantMessage,
    Message,
    Reasoning,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.principal import Principal
from agentstream.runs.store import ConversationNotFound, ConversationStore
from agentstream.store import (
    InvalidConversationId,
    InvalidCursor,
    SqlConversationStore,
    UnknownRun,
)
from agentstream.store.history import INTERRUPTED_TOOL_RESULT
from agentstream.store.models import ConversationRow

from .helpers import exchange, new_principal, run_id


async def test_works_through_the_protocol(store: SqlConversationStore, alice: Principal) -> None:
    pipeline: ConversationStore = store  # what the runner holds
    rid = run_id()
    started = await pipeline.start_run(alice, run_id=rid, conversation_id=None, user_message="Hi")
    conversation = await pipeline.finish_run(
        alice,
        run_id=rid,
        conversation_id=started.conversation_id,
        messages=[AssistantMessage(text="Hello")],
        status="completed",
    )
    assert conversation.id == started.conversation_id
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "Hi"),
        ("assistant", "Hello"),
    ]


async def test_create_commits_user_message_before_the_run(
    store: SqlConversationStore, alice: Principal
) -> None:
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=None,
        user_message="  Can you check   the system status of every production server please?",
        model="scripted:demo",
        metadata={"context": "ops"},
    )
    uuid.UUID(started.conversation_id)
    assert started.title == "Can you check the system status of every production server…"
    assert started.history == []
    assert started.metadata == {"context": "ops"}

    detail = await store.get_conversation(alice, started.conversation_id)
    assert detail.summary.model == "scripted:demo"
    assert [(m.role, m.status) for m in detail.messages] == [("user", "complete")]
    assert detail.messages[0].content.startswith("  Can you check")
    assert detail.messages[0].created_at.tzinfo is not None


async def test_continue_returns_prior_history(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello! How can I help?")
    started = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="What's 2+2?"
    )
    assert started.conversation_id == cid
    assert started.title == "Hi"
    assert list(started.history) == [
        UserMessage(content="Hi"),
        AssistantMessage(text="Hello! How can I help?"),
    ]


async def test_tool_round_trip_rebuilds_exact_provider_history(
    store: SqlConversationStore, alice: Principal
) -> None:
    rid = run_id()
    started = await store.start_run(
        alice, run_id=rid, conversation_id=None, user_message="Alert the admin"
    )
    cid = started.conversation_id
    call_turn = AssistantMessage(
        text="Let me alert them.",
        reasoning=(
            Reasoning(text="The user wants an alert.", signature="sig-abc==", provider="anthropic"),
            Reasoning(redacted="ENCRYPTED", provider="anthropic"),
        ),
        tool_calls=(
            ToolCall(
                id="call_1",
                name="alert_admin",
                arguments={"message": "down", "priority": "high"},
                provider_data={"thought_signature": "gemini-sig"},
            ),
            ToolCall(id="call_2", name="lookup", arguments={"q": "ünïcode ✓"}),
        ),
    )
    results = ToolResultsMessage(
        results=(
            ToolResultPart(tool_call_id="call_1", name="alert_admin", content='{"ticket": 42}'),
            ToolResultPart(
                tool_call_id="call_2", name="lookup", content="boom: timeout", outcome="error"
            ),
        )
    )
    await store.append_messages(
        alice, run_id=rid, conversation_id=cid, messages=[call_turn, results]
    )
    final = AssistantMessage(text=" Done: ticket 42.")
    completed = RunCompleted(
        run_id=rid,
        seq=9,
        message="Let me alert them. Done: ticket 42.",
        usage=Usage(input_tokens=100, output_tokens=20),
        tool_history=(
            ToolHistoryEntry(
                index=0,
                call_id="call_1",
                tool_name="alert_admin",
                input={"message": "down", "priority": "high"},
                output={"ticket": 42},
                duration_ms=150.0,
                text_offset=18,
            ),
            ToolHistoryEntry(
                index=1,
                call_id="call_2",
                tool_name="lookup",
                input={"q": "ünïcode ✓"},
                output="boom: timeout",
                is_error=True,
                duration_ms=3.5,
                text_offset=18,
            ),
        ),
        payloads=(Payload(kind="ticket", data={"id": 42}, payload_id="p1"),),
    )
    shown = AnswerShaped(
        run_id=rid,
        seq=9,
        message=completed.message,
        payloads=completed.payloads,
        suggested_values=(SuggestedValue(label="Yes", value="yes"),),
    )
    saved = await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[final],
        status="completed",
        completed=completed,
        shaped=shown,
    )
    assert saved.id == cid
    conversation = saved.to_agent_conversation()
    assert [(m["role"], m["content"]) for m in conversation["conversation"]] == [
        ("user", "Alert the admin"),
        ("assistant", "Let me alert them. Done: ticket 42."),
    ]
    assert conversation["updated_at"].endswith("Z")

    following = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="Thanks"
    )
    expected: list[Message] = [UserMessage(content="Alert the admin"), call_turn, results, final]
    assert list(following.history) == expected
    assert list(following.payloads) == [Payload(kind="ticket", data={"id": 42}, payload_id="p1")]

    detail = await store.get_conversation(alice, cid)
    answer = detail.messages[1]
    assert answer.role == "assistant"
    assert answer.status == "complete"
    assert answer.content == "Let me alert them. Done: ticket 42."
    assert answer.reasoning == "The user wants an alert."
    assert [(t.call_id, t.is_error, t.duration_ms, t.text_offset) for t in answer.tool_history] == [
        ("call_1", False, 150.0, 18),
        ("call_2", True, 3.5, 18),
    ]
    assert answer.usage is not None
    assert answer.usage["input_tokens"] == 100
    assert answer.payloads == [
        {"kind": "ticket", "data": {"id": 42}, "summary": None, "payload_id": "p1"}
    ]
    assert answer.suggested_values == [{"label": "Yes", "value": "yes"}]


async def test_interrupted_run_keeps_user_message_and_partial_answer(
    store: SqlConversationStore, alice: Principal
) -> None:
    rid = run_id()
    cid = (
        await store.start_run(alice, run_id=rid, conversation_id=None, user_message="Search it")
    ).conversation_id
    turn = AssistantMessage(
        text="Searching.", tool_calls=(ToolCall(id="c1", name="search", arguments={"q": "x"}),)
    )
    await store.append_messages(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[
            turn,
            ToolResultsMessage(
                results=(ToolResultPart(tool_call_id="c1", name="search", content="3 hits"),)
            ),
        ],
    )
    # The second turn was streaming a new tool call when the client went away.
    partial = AssistantMessage(
        text=" Found 3; now", tool_calls=(ToolCall(id="c2", name="fetch", arguments={}),)
    )
    conversation = await store.finish_run(
        alice, run_id=rid, conversation_id=cid, messages=[partial], status="cancelled"
    )
    assert [m.content for m in conversation.messages] == [
        "Search it",
        "Searching.\n\n Found 3; now",
    ]

    detail = await store.get_conversation(alice, cid)
    user, answer = detail.messages
    assert (user.role, user.content) == ("user", "Search it")
    assert answer.status == "interrupted"
    assert answer.content == "Searching.\n\n Found 3; now"
    # Only the tool call that finished is shown, with the offset of the text before it.
    assert [(t.call_id, t.output, t.text_offset, t.duration_ms) for t in answer.tool_history] == [
        ("c1", "3 hits", len("Searching."), None)
    ]

    # The next run's history answers the dangling call so a vendor accepts it.
    history = list(
        (
            await store.start_run(alice, run_id=run_id(), conversation_id=cid, user_message="Go on")
        ).history
    )
    assert history[-2] == partial
    assert history[-1] == ToolResultsMessage(
        results=(
            ToolResultPart(
                tool_call_id="c2",
                name="fetch",
                content=INTERRUPTED_TOOL_RESULT,
                outcome="interrupted",
            ),
        )
    )


async def test_values_json_cannot_hold_do_not_lose_the_run(
    store: SqlConversationStore, alice: Principal
) -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque value"

    rid = run_id()
    cid = (
        await store.start_run(
            alice,
            run_id=rid,
            conversation_id=None,
            user_message="Hi",
            metadata={"when": Opaque()},
        )
    ).conversation_id
    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text="Done")],
        status="completed",
        completed=RunCompleted(
            run_id=rid,
            seq=5,
            message="Done",
            tool_history=(
                ToolHistoryEntry(index=0, call_id="c", tool_name="t", input={}, output=Opaque()),
            ),
        ),
    )
    detail = await store.get_conversation(alice, cid)
    assert detail.metadata == {"when": "opaque value"}
    assert [(m.content, m.status) for m in detail.messages] == [
        ("Hi", "complete"),
        ("Done", "complete"),
    ]
    assert detail.messages[1].tool_history[0].output == "opaque value"


async def test_failed_run_without_output_is_shown_failed(
    store: SqlConversationStore, alice: Principal
) -> None:
    rid = run_id()
    cid = (
        await store.start_run(alice, run_id=rid, conversation_id=None, user_message="Hi")
    ).conversation_id
    conversation = await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage()],
        status="failed",
        error="The model provider is unavailable.",
    )
    assert [m.role for m in conversation.messages] == ["user", "assistant"]
    answer = (await store.get_conversation(alice, cid)).messages[1]
    assert (answer.status, answer.content, answer.error) == (
        "failed",
        "",
        "The model provider is unavailable.",
    )
    # An empty assistant message never reaches a provider.
    assert await store.history(alice, cid) == [UserMessage(content="Hi")]


async def test_unfinished_run_after_a_crash_is_interrupted(
    store: SqlConversationStore, alice: Principal
) -> None:
    rid = run_id()
    cid = (
        await store.start_run(alice, run_id=rid, conversation_id=None, user_message="Q")
    ).conversation_id
    detail = await store.get_conversation(alice, cid)
    assert [m.role for m in detail.messages] == ["user"]  # nothing to show for the answer yet
    await store.append_messages(
        alice, run_id=rid, conversation_id=cid, messages=[AssistantMessage(text="Half")]
    )
    detail = await store.get_conversation(alice, cid)
    assert [(m.role, m.content, m.status) for m in detail.messages] == [
        ("user", "Q", "complete"),
        ("assistant", "Half", "interrupted"),
    ]


async def test_list_pages_newest_first(store: SqlConversationStore) -> None:
    me = new_principal()
    ids = [await exchange(store, me, f"question {n}", f"answer {n}") for n in range(5)]
    await exchange(store, new_principal(), "someone else's", "not mine")

    first = await store.list_conversations(me, limit=2)
    assert [item.id for item in first.items] == [ids[4], ids[3]]
    assert first.next_cursor is not None
    second = await store.list_conversations(me, limit=2, cursor=first.next_cursor)
    assert [item.id for item in second.items] == [ids[2], ids[1]]
    assert second.next_cursor is not None
    third = await store.list_conversations(me, limit=2, cursor=second.next_cursor)
    assert [item.id for item in third.items] == [ids[0]]
    assert third.next_cursor is None

    # Activity moves a conversation to the top.
    await exchange(store, me, "again", "sure", conversation_id=ids[0])
    top = await store.list_conversations(me, limit=1)
    assert top.items[0].id == ids[0]
    assert top.items[0].title == "question 0"


async def test_paging_is_stable_when_times_tie(store: SqlConversationStore) -> None:
    me = new_principal()
    ids = {await exchange(store, me, f"q{n}", "a") for n in range(4)}
    same = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    async with store.engine.begin() as conn:
        await conn.execute(
            update(ConversationRow).where(ConversationRow.id.in_(ids)).values(updated_at=same)
        )
    seen: list[str] = []
    cursor = None
    while True:
        page = await store.list_conversations(me, limit=1, cursor=cursor)
        seen.extend(item.id for item in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == sorted(ids, reverse=True)


async def test_list_rejects_bad_paging(store: SqlConversationStore, alice: Principal) -> None:
    with pytest.raises(InvalidCursor):
        await store.list_conversations(alice, cursor="not-a-cursor")
    with pytest.raises(ValueError, match="limit"):
        await store.list_conversations(alice, limit=0)
    with pytest.raises(ValueError, match="limit"):
        await store.list_conversations(alice, limit=101)


@pytest.mark.parametrize("intruder", ["other user", "other tenant", "no tenant"])
async def test_others_conversations_are_not_found(
    store: SqlConversationStore, intruder: str
) -> None:
    owner = new_principal()
    cid = await exchange(store, owner, "private", "secret")
    other = {
        "other user": Principal(user_id="mallory", tenant_id=owner.tenant_id),
        "other tenant": Principal(user_id=owner.user_id, tenant_id="other-tenant"),
        "no tenant": Principal(user_id=owner.user_id),
    }[intruder]
    with pytest.raises(ConversationNotFound):
        await store.get_conversation(other, cid)
    with pytest.raises(ConversationNotFound):
        await store.start_run(other, run_id=run_id(), conversation_id=cid, user_message="hi")
    with pytest.raises(ConversationNotFound):
        await store.start_run(
            other, run_id=run_id(), conversation_id=cid, user_message="hi", create_if_missing=True
        )
    with pytest.raises(ConversationNotFound):
        await store.rename_conversation(other, cid, "mine now")
    with pytest.raises(ConversationNotFound):
        await store.delete_conversation(other, cid)
    with pytest.raises(ConversationNotFound):
        await store.append_messages(
            other, run_id=run_id(), conversation_id=cid, messages=[AssistantMessage(text="x")]
        )
    assert (await store.list_conversations(other)).items == ()
    # Nothing changed for the owner.
    detail = await store.get_conversation(owner, cid)
    assert detail.summary.title == "private"
    assert [m.content for m in detail.messages] == ["private", "secret"]


async def test_unknown_and_malformed_ids_are_not_found(
    store: SqlConversationStore, alice: Principal
) -> None:
    for bad in (str(uuid.uuid4()), "../../etc/passwd", "", "x" * 500):
        with pytest.raises(ConversationNotFound):
            await store.get_conversation(alice, bad)
        with pytest.raises(ConversationNotFound):
            await store.start_run(alice, run_id=run_id(), conversation_id=bad, user_message="hi")


async def test_create_if_missing_uses_the_clients_id(
    store: SqlConversationStore, alice: Principal
) -> None:
    wanted = str(uuid.uuid4())
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=wanted.upper(),
        user_message="from the playground",
        create_if_missing=True,
    )
    assert started.conversation_id == wanted
    again = await store.start_run(
        alice, run_id=run_id(), conversation_id=wanted, user_message="more", create_if_missing=True
    )
    assert again.conversation_id == wanted
    assert [m.content for m in (await store.get_conversation(alice, wanted)).messages] == [
        "from the playground",
        "more",
    ]
    with pytest.raises(InvalidConversationId):
        await store.start_run(
            alice, run_id=run_id(), conversation_id="a b", user_message="x", create_if_missing=True
        )


async def test_append_for_a_run_of_another_conversation_is_refused(
    store: SqlConversationStore, alice: Principal
) -> None:
    first = await exchange(store, alice, "one", "1")
    second = await exchange(store, alice, "two", "2")
    rid = run_id()
    await store.start_run(alice, run_id=rid, conversation_id=first, user_message="three")
    with pytest.raises(UnknownRun):
        await store.append_messages(
            alice, run_id=rid, conversation_id=second, messages=[AssistantMessage(text="x")]
        )
    assert [m.content for m in (await store.get_conversation(alice, second)).messages] == [
        "two",
        "2",
    ]


async def test_rename(store: SqlConversationStore, alice: Principal) -> None:
    cid = await exchange(store, alice, "hello", "hi")
    before = await store.get_conversation(alice, cid)
    summary = await store.rename_conversation(alice, cid, "Greetings")
    assert summary.title == "Greetings"
    assert summary.updated_at == before.summary.updated_at
    # A generated title never replaces the user's.
    assert await store.set_generated_title(alice, cid, "Model title") is None
    assert (await store.get_conversation(alice, cid)).summary.title == "Greetings"


async def test_generated_title_replaces_the_first_message_title(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "hello there, how do I reset my password", "like so")
    assert await store.set_generated_title(alice, cid, "Password reset") == "Password reset"
    assert (await store.get_conversation(alice, cid)).summary.title == "Password reset"


async def test_delete_removes_everything(store: SqlConversationStore, alice: Principal) -> None:
    cid = await exchange(store, alice, "forget me", "ok")
    keep = await exchange(store, alice, "keep me", "ok")
    await store.delete_conversation(alice, cid)
    with pytest.raises(ConversationNotFound):
        await store.get_conversation(alice, cid)
    with pytest.raises(ConversationNotFound):
        await store.delete_conversation(alice, cid)
    assert [item.id for item in (await store.list_conversations(alice)).items] == [keep]


async def test_racing_runs_keep_exchanges_whole(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "start", "ok")
    gate = asyncio.Event()

    async def run(name: str) -> None:
        rid = run_id()
        await store.start_run(alice, run_id=rid, conversation_id=cid, user_message=f"{name}?")
        await gate.wait()
        await store.append_messages(
            alice,
            run_id=rid,
            conversation_id=cid,
            messages=[
                AssistantMessage(text=f"{name} calls", tool_calls=(ToolCall(id=name, name="t"),)),
                ToolResultsMessage(
                    results=(ToolResultPart(tool_call_id=name, name="t", content="r"),)
                ),
            ],
        )
        await store.finish_run(
            alice,
            run_id=rid,
            conversation_id=cid,
            messages=[AssistantMessage(text=f"{name}!")],
            status="completed",
        )

    tasks = [asyncio.create_task(run(name)) for name in ("a", "b", "c")]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(*tasks)

    history = await store.history(alice, cid)
    assert len(history) == 2 + 3 * 4
    exchanges = [history[i : i + 4] for i in range(2, len(history), 4)]
    names = []
    for chunk in exchanges:
        assert isinstance(chunk[0], UserMessage)
        name = chunk[0].content.rstrip("?")
        names.append(name)
        assert chunk[1:] == [
            AssistantMessage(text=f"{name} calls", tool_calls=(ToolCall(id=name, name="t"),)),
            ToolResultsMessage(results=(ToolResultPart(tool_call_id=name, name="t", content="r"),)),
            AssistantMessage(text=f"{name}!"),
        ]
    assert sorted(names) == ["a", "b", "c"]
    shown = (await store.get_conversation(alice, cid)).messages
    assert [m.content for m in shown[2:]] == [
        text for name in names for text in (f"{name}?", f"{name} calls\n\n{name}!")
    ]


async def test_timestamps_are_utc(store: SqlConversationStore, alice: Principal) -> None:
    before = datetime.now(UTC)
    cid = await exchange(store, alice, "time", "now")
    summary = (await store.get_conversation(alice, cid)).summary
    assert summary.created_at.tzinfo is not None
    assert summary.created_at >= before.replace(microsecond=0)
    assert summary.to_json()["created_at"].endswith("Z")


async def test_new_rows_are_keyed_in_the_order_they_were_made(
    store: SqlConversationStore, alice: Principal
) -> None:
    """Conversations, runs and messages the store creates get time-ordered ids, so a burst's
    new rows go side by side at the end of each index (see ``agentstream.ids``)."""
    conversations = []
    for text in ("one", "two", "three"):
        started = await store.start_run(
            alice, run_id=run_id(), conversation_id=None, user_message=text
        )
        conversations.append(started.conversation_id)
        await asyncio.sleep(0.002)
    assert sorted(conversations) == conversations
    assert {uuid.UUID(cid).version for cid in conversations} == {7}
    first = await store.get_conversation(alice, conversations[0])
    assert uuid.UUID(first.messages[0].id).version == 7
