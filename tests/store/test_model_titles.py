"""A conversation's first answer earns it a title written by the model (when enabled)."""

from __future__ import annotations

from agentstream import Agent, Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner, RunRequest, model_titles
from agentstream.store import SqlConversationStore

TITLE_RULE = {"match": "Write a title", "turns": [{"text": '"Disk space check."'}]}
ANSWER_RULE = {"turns": [{"text": "Plenty left."}]}


async def ask(
    runner: Runner, principal: Principal, message: str, conversation_id: str | None = None
) -> str:
    session = await runner.begin(
        RunRequest(message=message, principal=principal, conversation_id=conversation_id)
    )
    events = [event async for event in session.events()]
    assert events[-1].type == "run_completed"
    assert session.conversation_id is not None
    return session.conversation_id


async def test_the_first_answer_gets_a_model_title_once(
    store: SqlConversationStore, alice: Principal
) -> None:
    provider = ScriptedProvider({"rules": [TITLE_RULE, ANSWER_RULE]})
    agent = Agent(model=provider)
    runner = Runner(agent, store=store, titles=model_titles(agent))
    cid = await ask(runner, alice, "how much disk is left on the db server?")
    await runner.settle()
    assert (await store.get_conversation(alice, cid)).summary.title == "Disk space check"
    title_requests = [
        r for r in provider.requests if r.tools == () and "Write a title" in r.messages[0].content
    ]  # type: ignore[union-attr]
    assert len(title_requests) == 1
    assert title_requests[0].messages[0].content.endswith("how much disk is left on the db server?")  # type: ignore[union-attr]
    await ask(runner, alice, "and on the web server?", conversation_id=cid)
    await runner.settle()
    assert len([r for r in provider.requests if "Write a title" in r.messages[0].content]) == 1  # type: ignore[union-attr]
    await runner.aclose()


async def test_a_failing_title_model_keeps_the_first_message_title(
    store: SqlConversationStore, alice: Principal
) -> None:
    failing = {
        "match": "Write a title",
        "turns": [{"error": {"kind": "overloaded", "message": "busy"}}],
    }
    agent = Agent(model=ScriptedProvider({"rules": [failing, ANSWER_RULE]}))
    runner = Runner(agent, store=store, titles=model_titles(agent))
    cid = await ask(runner, alice, "how much disk is left?")
    await runner.settle()
    assert (await store.get_conversation(alice, cid)).summary.title == "how much disk is left?"


async def test_without_a_title_writer_nothing_is_asked(
    store: SqlConversationStore, alice: Principal
) -> None:
    provider = ScriptedProvider({"rules": [TITLE_RULE, ANSWER_RULE]})
    runner = Runner(Agent(model=provider), store=store)
    await ask(runner, alice, "how much disk is left?")
    await runner.settle()
    assert len(provider.requests) == 1
