"""Pending tool calls in the loop: frontend tools end the run with the call open, calls that
need approval wait for a person, and the next run continues from the answers."""

from __future__ import annotations

import json
import re

import pytest

from agentstream import Agent, RunInput, tool
from agentstream.events import RunCompleted, ToolCallArgs, ToolCallFinished, TurnStarted
from agentstream.messages import (
    AssistantMessage,
    Message,
    PendingToolCall,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.pending import (
    NOT_ANSWERED_TOOL_RESULT,
    Answers,
    ApprovalDecision,
    ClientToolResult,
    InvalidAnswers,
    check_answers,
    open_calls,
    provider_history,
)
from agentstream.providers.scripted import ScriptedProvider

from .helpers import collect, of_type
from .pending_helpers import PICK, Refunds, script, vendor_problem


async def test_a_frontend_call_ends_the_run_and_its_result_continues_it() -> None:
    provider = script()
    agent = Agent(model=provider, tools=Refunds().tools)
    first = agent.run(RunInput(message="Pick a colour", client_tools=[PICK]))
    events = [event async for event in first]
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert done.pending_calls == (
        PendingToolCall(call_id="c2", name="pick_color", arguments={"hint": "warm"}),
    )
    assert {t.name for t in provider.requests[0].tools} == {"refund", "lookup", "pick_color"}
    # The server call of the same turn ran; the frontend one did not.
    assert [e.call_id for e in of_type(events, ToolCallFinished)] == ["c1"]
    assert [e.call_id for e in of_type(events, ToolCallArgs)] == ["c1", "c2"]
    results = first.new_messages[-1]
    assert isinstance(results, ToolResultsMessage)
    assert [r.tool_call_id for r in results.results] == ["c1"]

    history = provider_history([UserMessage(content="Pick a colour"), *first.new_messages])
    assert open_calls(history) == done.pending_calls
    answers = Answers(results=(ClientToolResult(call_id="c2", content='"teal"'),))
    second = agent.run(RunInput(message="", history=history, answers=answers))
    events = [event async for event in second]
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "You picked it."
    sent = provider.requests[-1].messages
    assert vendor_problem(sent) is None
    joined = sent[-1]
    assert isinstance(joined, ToolResultsMessage)
    assert [(r.tool_call_id, r.content) for r in joined.results] == [
        ("c1", "found theme"),
        ("c2", '"teal"'),
    ]
    # What the second run adds: the client's result first, then the answer.
    assert isinstance(second.new_messages[0], ToolResultsMessage)
    assert second.new_messages[0].results[0].content == '"teal"'


async def test_approval_pauses_only_the_calls_the_policy_picks_and_approval_runs_them() -> None:
    refunds = Refunds()
    provider = script()
    agent = Agent(model=provider, tools=refunds.tools)
    first = agent.run("Please refund both")
    events = [event async for event in first]
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert refunds.made == [5]  # the small one needs no approval
    assert done.pending_calls == (
        PendingToolCall(
            call_id="r1", name="refund", arguments={"amount": 500}, waiting_for="approval"
        ),
    )
    history = provider_history([UserMessage(content="Please refund both"), *first.new_messages])
    approve = Answers(decisions=(ApprovalDecision(call_id="r1", approved=True),))
    second = agent.run(RunInput(message="", history=history, answers=approve))
    events = [event async for event in second]
    assert refunds.made == [5, 500]
    finished = of_type(events, ToolCallFinished)
    assert [(e.call_id, e.result, e.is_error) for e in finished] == [
        ("r1", "refunded 500.0", False)
    ]
    # The approved call ran before the model was called again.
    assert events.index(finished[0]) < events.index(of_type(events, TurnStarted)[0])
    assert vendor_problem(provider.requests[-1].messages) is None
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "Done."


async def test_a_denied_call_reaches_the_model_as_a_denial_not_an_error() -> None:
    refunds = Refunds()
    provider = script()
    agent = Agent(model=provider, tools=refunds.tools)
    first = agent.run("Please refund both")
    [event async for event in first]
    history = provider_history([UserMessage(content="Please refund both"), *first.new_messages])
    deny = Answers(decisions=(ApprovalDecision(call_id="r1", approved=False, reason="too much"),))
    events = await collect(agent, RunInput(message="", history=history, answers=deny))
    assert refunds.made == [5]
    [denied] = of_type(events, ToolCallFinished)
    assert not denied.is_error and denied.output["denied"] is True
    joined = provider.requests[-1].messages[-1]
    assert isinstance(joined, ToolResultsMessage)
    by_id = {r.tool_call_id: r for r in joined.results}
    assert not by_id["r1"].is_error
    assert json.loads(by_id["r1"].content) == {
        "denied": True,
        "message": "The user did not approve this call.",
        "reason": "too much",
    }


async def test_a_new_message_instead_of_answers_closes_the_open_calls() -> None:
    provider = script()
    agent = Agent(model=provider, tools=Refunds().tools)
    first = agent.run(RunInput(message="Pick a colour", client_tools=[PICK]))
    [event async for event in first]
    history = provider_history([UserMessage(content="Pick a colour"), *first.new_messages])
    events = await collect(agent, RunInput(message="Never mind", history=history))
    assert isinstance(events[-1], RunCompleted) and events[-1].message == "Fine."
    sent = provider.requests[-1].messages
    assert vendor_problem(sent) is None
    closed = sent[-2]
    assert isinstance(closed, ToolResultsMessage)
    assert closed.results[1].content == NOT_ANSWERED_TOOL_RESULT and closed.results[1].is_error
    assert sent[-1] == UserMessage(content="Never mind")


def test_answers_must_fit_the_open_calls_exactly() -> None:
    waiting = (
        PendingToolCall(call_id="a", name="pick_color"),
        PendingToolCall(call_id="b", name="refund", waiting_for="approval"),
    )
    result_a = ClientToolResult(call_id="a", content="x")
    approve_b = ApprovalDecision(call_id="b", approved=True)
    check_answers(waiting, Answers(results=(result_a,), decisions=(approve_b,)))
    cases = {
        "no tool call 'z' is waiting": Answers(
            results=(ClientToolResult(call_id="z", content=""),)
        ),
        "'b' (refund) waits for approval": Answers(
            results=(result_a, ClientToolResult(call_id="b", content=""))
        ),
        "'a' (pick_color) waits for a result": Answers(
            decisions=(ApprovalDecision(call_id="a", approved=True), approve_b)
        ),
        "still waiting for an answer: b": Answers(results=(result_a,)),
        "answered twice": Answers(results=(result_a, result_a), decisions=(approve_b,)),
    }
    for message, answers in cases.items():
        with pytest.raises(InvalidAnswers, match=re.escape(message)):
            check_answers(waiting, answers)


def test_history_joins_a_turns_results_stored_over_two_runs() -> None:
    calls = (ToolCall(id="a", name="lookup"), ToolCall(id="b", name="pick_color"))
    stored: list[Message] = [
        UserMessage(content="q"),
        AssistantMessage(tool_calls=calls),
        ToolResultsMessage(
            results=(),
            pending=(PendingToolCall(call_id="b", name="pick_color"),),
        ),
    ]
    assert open_calls(provider_history(stored)) == (
        PendingToolCall(call_id="b", name="pick_color"),
    )
    # A run was stopped before its server call finished: still open for the frontend call,
    # and once answered the two results are one message in call order.
    answered = ToolResultsMessage(
        results=(ToolResultPart(tool_call_id="b", name="pick_color", content="blue"),)
    )
    history = provider_history([*stored, answered, AssistantMessage(text="ok")])
    assert vendor_problem(history) is None
    joined = history[2]
    assert isinstance(joined, ToolResultsMessage)
    assert [r.tool_call_id for r in joined.results] == ["a", "b"]
    assert joined.results[0].is_error  # never returned: interrupted


async def test_a_frontend_call_with_broken_arguments_is_an_error_for_the_model() -> None:
    provider = ScriptedProvider(
        {
            "turns": [
                {"tool_calls": [{"name": "pick_color", "id": "p1", "fragments": ['{"hint": ']}]},
                {"text": "Sorry."},
            ]
        }
    )
    agent = Agent(model=provider)
    events = await collect(agent, RunInput(message="Pick a colour", client_tools=[PICK]))
    done = events[-1]
    assert isinstance(done, RunCompleted) and done.pending_calls == ()
    [failed] = of_type(events, ToolCallFinished)
    assert failed.is_error and failed.error is not None
    assert failed.error.kind == "invalid_arguments"
    assert done.message == "Sorry."


async def test_requires_approval_true_holds_every_call() -> None:
    ran: list[str] = []

    @tool(requires_approval=True)
    def restart(service: str) -> str:
        """Restart a service."""
        ran.append(service)
        return "restarted"

    provider = ScriptedProvider(
        {"turns": [{"tool_calls": [{"name": "restart", "arguments": {"service": "db"}}]}]}
    )
    events = await collect(Agent(model=provider, tools=[restart]), "restart the db")
    done = events[-1]
    assert isinstance(done, RunCompleted) and ran == []
    assert [(p.name, p.arguments, p.waiting_for) for p in done.pending_calls] == [
        ("restart", {"service": "db"}, "approval")
    ]
