"""Conversations as trees on both databases: edits and answers given again start branches,
the old ones are kept, and the model, the reader and the payload manifest see the active
path only."""

from __future__ import annotations

import uuid

import pytest

from agentstream.errors import InvalidBranch, MessageNotFound
from agentstream.events import Payload, RunCompleted
from agentstream.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.pending import Answers, ApprovalDecision, InvalidAnswers
from agentstream.principal import Principal
from agentstream.runs import Branch
from agentstream.runs.store import ConversationNotFound
from agentstream.store import SqlConversationStore

from .helpers import exchange, new_principal, run_id


async def answer(
    store: SqlConversationStore,
    principal: Principal,
    cid: str | None,
    question: str | None,
    reply: str,
    branch: Branch | None = None,
    payloads: tuple[Payload, ...] = (),
) -> str:
    """One run started at ``branch`` (else after the active leaf) and completed."""
    rid = run_id()
    started = await store.start_run(
        principal, run_id=rid, conversation_id=cid, user_message=question, branch=branch
    )
    await store.finish_run(
        principal,
        run_id=rid,
        conversation_id=started.conversation_id,
        messages=[AssistantMessage(text=reply)],
        status="completed",
        completed=RunCompleted(run_id=rid, seq=3, message=reply, payloads=payloads),
    )
    return started.conversation_id


async def shown(store: SqlConversationStore, principal: Principal, cid: str) -> list[str]:
    return [m.content for m in (await store.get_conversation(principal, cid)).messages]


async def test_answering_again_adds_a_sibling_answer_and_keeps_the_first(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    await exchange(store, alice, "Tell a joke", "A bad joke", conversation_id=cid)
    question = (await store.get_conversation(alice, cid)).messages[2]
    again = run_id()
    started = await store.start_run(
        alice,
        run_id=again,
        conversation_id=cid,
        user_message=None,
        branch=Branch(after=question.id, again=True),
    )
    assert list(started.history) == [UserMessage(content="Hi"), AssistantMessage(text="Hello!")]
    assert started.asked == UserMessage(content="Tell a joke")
    # While the new answer has not written anything, the question is where the path ends.
    assert await shown(store, alice, cid) == ["Hi", "Hello!", "Tell a joke"]
    await store.finish_run(
        alice,
        run_id=again,
        conversation_id=cid,
        messages=[AssistantMessage(text="A good joke")],
        status="completed",
        completed=RunCompleted(run_id=again, seq=3, message="A good joke"),
    )
    assert await shown(store, alice, cid) == ["Hi", "Hello!", "Tell a joke", "A good joke"]
    assert await store.history(alice, cid) == [
        UserMessage(content="Hi"),
        AssistantMessage(text="Hello!"),
        UserMessage(content="Tell a joke"),
        AssistantMessage(text="A good joke"),
    ]
    # The next message continues the new answer.
    await exchange(store, alice, "Another", "Sure", conversation_id=cid)
    history = await store.history(alice, cid)
    assert [m.text for m in history if isinstance(m, AssistantMessage)] == [
        "Hello!",
        "A good joke",
        "Sure",
    ]


async def test_answering_again_leaves_out_every_run_of_the_first_answer(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    asked, continued = run_id(), run_id()
    await store.start_run(alice, run_id=asked, conversation_id=cid, user_message="Refund A7")
    call = ToolCall(id="r1", name="refund", arguments={"order": "A7"})
    await store.finish_run(
        alice,
        run_id=asked,
        conversation_id=cid,
        messages=[AssistantMessage(text="I'll refund it.", tool_calls=(call,))],
        status="completed",
    )
    # The run that continued the answer (after an approval) has no user message of its own.
    await store.start_run(alice, run_id=continued, conversation_id=cid, user_message=None)
    result = ToolResultsMessage(
        results=(ToolResultPart(tool_call_id="r1", name="refund", content="{}"),)
    )
    await store.finish_run(
        alice,
        run_id=continued,
        conversation_id=cid,
        messages=[result, AssistantMessage(text="Done.")],
        status="completed",
    )
    question = (await store.get_conversation(alice, cid)).messages[2]
    assert question.content == "Refund A7"
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=cid,
        user_message=None,
        branch=Branch(after=question.id, again=True),
    )
    assert list(started.history) == [UserMessage(content="Hi"), AssistantMessage(text="Hello!")]


async def test_an_edited_question_starts_a_branch_and_keeps_the_old_one(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    await exchange(store, alice, "Tell a jkoe", "A what?", conversation_id=cid)
    first_answer = (await store.get_conversation(alice, cid)).messages[1]
    rid = run_id()
    started = await store.start_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        user_message="Tell a joke",
        branch=Branch(after=first_answer.id),
    )
    assert list(started.history) == [UserMessage(content="Hi"), AssistantMessage(text="Hello!")]
    assert started.asked is None
    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text="A joke")],
        status="completed",
    )
    assert await shown(store, alice, cid) == ["Hi", "Hello!", "Tell a joke", "A joke"]
    await exchange(store, alice, "More", "Another joke", conversation_id=cid)
    assert await shown(store, alice, cid) == [
        "Hi",
        "Hello!",
        "Tell a joke",
        "A joke",
        "More",
        "Another joke",
    ]


async def test_editing_the_first_question_starts_the_conversation_anew(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    await exchange(store, alice, "Next", "Sure", conversation_id=cid)
    rid = run_id()
    started = await store.start_run(
        alice, run_id=rid, conversation_id=cid, user_message="Hey", branch=Branch(after=None)
    )
    assert list(started.history) == [] and started.payloads == []
    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text="Hey you")],
        status="completed",
    )
    assert await shown(store, alice, cid) == ["Hey", "Hey you"]


async def test_payloads_follow_the_branch_they_belong_to(
    store: SqlConversationStore, alice: Principal
) -> None:
    ticket = Payload(kind="ticket", data={"id": 1}, payload_id="p1")
    chart = Payload(kind="chart", data={"id": 2}, payload_id="p2")
    cid = await answer(store, alice, None, "Open a ticket", "Opened", payloads=(ticket,))
    await answer(store, alice, cid, "Draw it", "Drawn", payloads=(chart,))
    path = (await store.get_conversation(alice, cid)).messages
    started = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="Draw", branch=Branch(after=None)
    )
    assert list(started.payloads) == []
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=cid,
        user_message="Draw again",
        branch=Branch(after=path[1].id),
    )
    assert list(started.payloads) == [ticket]
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=cid,
        user_message="And now",
        branch=Branch(after=path[3].id),
    )
    assert list(started.payloads) == [ticket, chart]


async def test_pending_calls_follow_the_branch_they_belong_to(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    asked = run_id()
    await store.start_run(alice, run_id=asked, conversation_id=cid, user_message="Refund A7")
    call = ToolCall(id="r1", name="refund", arguments={"order": "A7"})
    await store.finish_run(
        alice,
        run_id=asked,
        conversation_id=cid,
        messages=[AssistantMessage(text="", tool_calls=(call,))],
        status="completed",
    )
    first_answer = (await store.get_conversation(alice, cid)).messages[1]
    # A question asked in place of the one whose answer waits: nothing waits on its branch.
    rid = run_id()
    await store.start_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        user_message="Never mind",
        branch=Branch(after=first_answer.id),
    )
    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text="OK")],
        status="completed",
    )
    approve = Answers(decisions=(ApprovalDecision(call_id="r1", approved=True),))
    with pytest.raises(InvalidAnswers):
        await store.start_run(
            alice, run_id=run_id(), conversation_id=cid, user_message=None, answers=approve
        )
    assert await shown(store, alice, cid) == ["Hi", "Hello!", "Never mind", "OK"]


async def test_a_branch_at_a_message_the_conversation_lacks_is_refused(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    other = await exchange(store, alice, "Elsewhere", "Yes")
    elsewhere = (await store.get_conversation(alice, other)).messages[0].id
    for missing in ("no-such-message", elsewhere):
        with pytest.raises(MessageNotFound):
            await store.start_run(
                alice,
                run_id=run_id(),
                conversation_id=cid,
                user_message="x",
                branch=Branch(after=missing),
            )
    assert await shown(store, alice, cid) == ["Hi", "Hello!"]


async def test_only_a_user_message_is_answered_again(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    reply = (await store.get_conversation(alice, cid)).messages[1]
    for after in (reply.id, None):
        with pytest.raises(InvalidBranch):
            await store.start_run(
                alice,
                run_id=run_id(),
                conversation_id=cid,
                user_message=None,
                branch=Branch(after=after, again=True),
            )
    assert await shown(store, alice, cid) == ["Hi", "Hello!"]


async def test_another_users_conversation_cannot_be_branched(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    question = (await store.get_conversation(alice, cid)).messages[0]
    with pytest.raises(ConversationNotFound):
        await store.start_run(
            new_principal(),
            run_id=run_id(),
            conversation_id=cid,
            user_message=None,
            branch=Branch(after=question.id, again=True),
        )


async def test_a_branch_of_a_conversation_not_started_creates_nothing(
    store: SqlConversationStore, alice: Principal
) -> None:
    wanted = str(uuid.uuid4())
    with pytest.raises(MessageNotFound):
        await store.start_run(
            alice,
            run_id=run_id(),
            conversation_id=wanted,
            user_message="Hi",
            create_if_missing=True,
            branch=Branch(after="m1"),
        )
    with pytest.raises(ConversationNotFound):
        await store.get_conversation(alice, wanted)
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=wanted,
        user_message="Hi",
        create_if_missing=True,
        branch=Branch(after=None),
    )
    assert started.conversation_id == wanted and list(started.history) == []


async def test_a_run_on_a_branch_switched_away_from_finishes_there(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "Hi", "Hello!")
    await exchange(store, alice, "Tell a jkoe", "A what?", conversation_id=cid)
    hi, hello, typo, _ = (await store.get_conversation(alice, cid)).messages
    rid = run_id()
    await store.start_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        user_message="Tell a joke",
        branch=Branch(after=hello.id),
    )
    switched = await store.set_active(alice, cid, typo.id)  # while the new answer streams
    assert [m.content for m in switched.messages] == ["Hi", "Hello!", "Tell a jkoe", "A what?"]
    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text="A joke")],
        status="completed",
    )
    assert await shown(store, alice, cid) == ["Hi", "Hello!", "Tell a jkoe", "A what?"]
    edited = await store.set_active(alice, cid, rid)
    assert [m.content for m in edited.messages] == ["Hi", "Hello!", "Tell a joke", "A joke"]
    assert edited.messages[2].siblings == (typo.id, edited.messages[2].id)


async def test_an_answer_that_failed_at_once_is_answered_again_through_its_question(
    store: SqlConversationStore, alice: Principal
) -> None:
    rid = run_id()
    started = await store.start_run(alice, run_id=rid, conversation_id=None, user_message="Hi")
    cid = started.conversation_id
    await store.finish_run(
        alice, run_id=rid, conversation_id=cid, messages=(), status="failed", error="boom"
    )
    question, failed = (await store.get_conversation(alice, cid)).messages
    assert failed.status == "failed" and failed.id == rid
    assert await store.siblings(alice, cid, rid) == (rid,)
    branch = await store.branch_for(alice, cid, rid, again=True)
    assert branch == Branch(after=question.id, again=True)
    with pytest.raises(InvalidBranch):
        await store.branch_for(alice, cid, rid, again=False)
    with pytest.raises(MessageNotFound):
        await store.branch_for(alice, cid, "nope", again=True)
    again = run_id()
    await store.start_run(
        alice, run_id=again, conversation_id=cid, user_message=None, branch=branch
    )
    await store.finish_run(
        alice,
        run_id=again,
        conversation_id=cid,
        messages=[AssistantMessage(text="Hello!")],
        status="completed",
    )
    assert await shown(store, alice, cid) == ["Hi", "Hello!"]
