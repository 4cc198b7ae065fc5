"""A reopened conversation places each tool card where it was live: the stored answer is the
loop's text exactly as streamed and ``text_offset`` points into it with no drift, however many
tools came before."""

from __future__ import annotations

from agentstream import Agent, tool
from agentstream.chat import ChatHooks
from agentstream.events import RunCompleted, TextDelta
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner, RunRequest
from agentstream.store import SqlConversationStore


@tool
async def sweep(depth: int) -> str:
    """Sweep a little deeper.

    Args:
        depth: How deep.
    """
    return f"swept {depth}"


async def test_text_offsets_do_not_drift(store: SqlConversationStore, alice: Principal) -> None:
    turns = [
        {
            "text": f"Pass {n}, going deeper.",
            "tool_calls": [{"name": "sweep", "arguments": {"depth": n}}],
        }
        for n in range(4)
    ]
    provider = ScriptedProvider({"turns": [*turns, {"text": "Deeper sweep done."}]})
    runner = Runner(Agent(model=provider, tools=[sweep]), store=store, hooks=ChatHooks())
    session = await runner.begin(RunRequest(message="sweep", principal=alice))
    events = [event async for event in session.events()]
    completed = events[-1]
    assert isinstance(completed, RunCompleted)
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))

    assert session.conversation_id is not None
    detail = await store.get_conversation(alice, session.conversation_id)
    answer = detail.messages[-1]
    assert answer.content == streamed
    cuts = [call.text_offset for call in answer.tool_history]
    assert [answer.content[:cut].rsplit("\n\n", 1)[-1] for cut in cuts] == [
        f"Pass {n}, going deeper." for n in range(4)
    ]
