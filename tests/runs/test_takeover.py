"""Going on with a run from where a worker that died left it: for a run cut after *every* one
of its events, the store as the dead worker left it and the log up to the cut are enough for
a new loop to finish the run with the same answer, numbering its events on from the cut, and
without running a tool twice unless it is idempotent.

The dead worker is a real run of the loop (scripted model, real tools) whose log is cut; what
the store holds at the cut is what the run session commits (each round as the next turn
starts), with and without the last of those writes (it may not have committed yet).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

import pytest

from agentstream import Agent, ToolContext, tool
from agentstream.agent import RunInput
from agentstream.agent.resumption import NOT_RETRIED_MESSAGE
from agentstream.events import (
    RunCompleted,
    RunEvent,
    RunResumed,
    RunStarted,
    ToolCallArgs,
    TurnStarted,
)
from agentstream.messages import Message, ToolResultsMessage, UserMessage
from agentstream.pending import Answers, ApprovalDecision
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs.request import RunRequest
from agentstream.runs.takeover import (
    CannotResume,
    request_from_record,
    request_record,
    resumption,
)
from agentstream.server.settings import Settings, SettingsError

SCRIPT = {
    "turns": [
        {
            "text": "Charging. ",
            "tool_calls": [{"name": "charge", "id": "c1", "arguments": {"amount": 5}}],
            "usage": {"input_tokens": 10, "output_tokens": 3},
        },
        {
            "text": "Looking. ",
            "tool_calls": [{"name": "lookup", "id": "c2", "arguments": {"order": "A"}}],
            "usage": {"input_tokens": 20, "output_tokens": 3},
        },
        {"text": "All done, shipped.", "usage": {"input_tokens": 30, "output_tokens": 4}},
    ]
}


def make_agent(ran: Counter[str]) -> Agent:
    @tool
    async def charge(ctx: ToolContext, amount: int) -> str:
        """Charge the card."""
        ran["charge"] += 1
        return f"charged {amount}"

    @tool(idempotent=True)
    async def lookup(ctx: ToolContext, order: str) -> str:
        """Look an order up."""
        ran["lookup"] += 1
        return f"{order} shipped"

    return Agent(model=ScriptedProvider(SCRIPT), tools=[charge, lookup])


async def whole_run() -> tuple[list[RunEvent], list[Message]]:
    run = make_agent(Counter()).run(RunInput(message="go", run_id="r1"))
    events = [event async for event in run]
    return events, [UserMessage(content="go"), *run.new_messages]


def stored_at(events: Sequence[RunEvent], messages: list[Message], lagging: bool) -> list[Message]:
    """What the store holds when the log ends with ``events``: the question, then each
    round committed as the turn after it started (``lagging``: the last such write had not
    committed)."""
    started = sum(isinstance(e, TurnStarted) for e in events)
    rounds = max(0, started - 1 - int(lagging))
    return messages[: 1 + 2 * rounds]


def ran_before(events: Sequence[RunEvent]) -> Counter[str]:
    """The tools that may have run before the cut: a tool starts only once its call's
    arguments are in the log."""
    return Counter(e.name for e in events if isinstance(e, ToolCallArgs))


@pytest.mark.parametrize("lagging", [False, True])
async def test_a_run_cut_after_any_event_is_finished_by_another_loop(lagging: bool) -> None:
    events, messages = await whole_run()
    answer = events[-1]
    assert isinstance(answer, RunCompleted)
    for cut in range(len(events) - 1):
        log = events[:cut]
        stored = stored_at(log, messages, lagging)
        ran: Counter[str] = Counter()
        resume = resumption(stored, log)
        run = make_agent(ran).run(
            RunInput(message="go", run_id="r1", history=stored, resume=resume)
        )
        continued = [event async for event in run]
        where = f"cut after {type(log[-1]).__name__ if log else 'nothing'} #{cut}"

        assert [e.seq for e in continued] == list(range(cut, cut + len(continued))), where
        if log:
            # ``run_resumed`` first (after the end of the part the dead worker left open).
            assert any(isinstance(e, RunResumed) for e in continued[:2]), where
            assert not any(isinstance(e, RunStarted) for e in continued), where
        else:  # nothing was seen of it: it starts as any run does
            assert isinstance(continued[0], RunStarted), where
            assert not any(isinstance(e, RunResumed) for e in continued), where
        done = continued[-1]
        assert isinstance(done, RunCompleted), where
        assert done.message == answer.message, where
        assert [h.call_id for h in done.tool_history] == ["c1", "c2"], where
        # What every model call used, the dead worker's too (a call redone is paid twice).
        assert done.usage.input_tokens >= answer.usage.input_tokens == 60, where
        assert run.usage.usage.input_tokens >= done.usage.input_tokens, where

        before = ran_before(log)
        # Never twice: a charge that may have run is not run again (and one that cannot
        # have run is run).
        assert before["charge"] + ran["charge"] == 1, where
        charged = next(h for h in done.tool_history if h.call_id == "c1")
        finished_before = any(
            getattr(e, "call_id", None) == "c1" and e.type == "tool_call_finished" for e in log
        )
        if before["charge"] and not finished_before:
            assert charged.outcome == "interrupted", where
            assert NOT_RETRIED_MESSAGE in json.dumps(charged.output), where
        else:
            assert charged.outcome == "ok", where
        # The idempotent lookup is run again when it may have been cut short.
        assert before["lookup"] + ran["lookup"] >= 1, where

        # What the loop adds to the store completes the run's messages exactly once.
        whole = [*stored, *run.new_messages]
        calls = [c.id for m in whole if hasattr(m, "tool_calls") for c in m.tool_calls]
        assert calls == ["c1", "c2"], where
        results = [
            r.tool_call_id for m in whole if isinstance(m, ToolResultsMessage) for r in m.results
        ]
        assert results == ["c1", "c2"], where


async def test_a_log_that_lost_its_start_is_not_continued() -> None:
    events, messages = await whole_run()
    with pytest.raises(CannotResume):
        resumption(messages[:1], events[3:9])


async def test_approved_calls_that_never_ran_run_once_after_a_takeover() -> None:
    """A run that answers a person's approval died before running the approved call: the
    worker that takes it over runs it, once."""
    ran: Counter[str] = Counter()

    @tool(requires_approval=True)
    async def refund(ctx: ToolContext, amount: int) -> str:
        """Refund."""
        ran["refund"] += 1
        return f"refunded {amount}"

    script = {
        "turns": [
            {"tool_calls": [{"name": "refund", "id": "r", "arguments": {"amount": 3}}]},
            {"text": "Refunded."},
        ]
    }
    agent = Agent(model=ScriptedProvider(script), tools=[refund])
    first = agent.run(RunInput(message="refund me", run_id="a"))
    asked = [event async for event in first]
    assert isinstance(asked[-1], RunCompleted) and asked[-1].pending_calls
    history = [UserMessage(content="refund me"), *first.new_messages]

    answers = Answers(decisions=(ApprovalDecision(call_id="r", approved=True),))
    answering = agent.run(RunInput(message="", run_id="b", history=history, answers=answers))
    whole = [event async for event in answering]
    assert ran["refund"] == 1
    recorded = answering.new_messages[0]  # the answers, committed with the run's start
    assert isinstance(recorded, ToolResultsMessage) and recorded.pending

    # The worker died right after the run opened: only run_started is in the log.
    ran.clear()
    resume = resumption([recorded], whole[:1])
    again = agent.run(RunInput(message="", run_id="b", history=[*history, recorded], resume=resume))
    continued = [event async for event in again]
    assert ran["refund"] == 1
    done = continued[-1]
    assert isinstance(done, RunCompleted) and done.message == "Refunded."
    assert [h.outcome for h in done.tool_history] == ["ok"]


def test_a_request_is_kept_as_json_and_read_back() -> None:
    request = RunRequest(
        message="hi",
        principal=Principal(user_id="u", tenant_id="t", token="secret"),
        conversation_id="c",
        context={"page": 3},
        reader={"dialect": "tray"},
    )
    record = request_record(request)
    assert record is not None
    again = request_from_record(record)
    assert request_record(again) == record
    assert (again.principal, again.context, again.reader) == (
        request.principal,
        {"page": 3},
        {"dialect": "tray"},
    )
    # A context JSON cannot hold: the run is not kept for a takeover (it ends as before).
    assert (
        request_record(RunRequest(message="hi", principal=request.principal, context=object()))
        is None
    )


def test_the_lease_and_takeover_settings_are_read_and_checked() -> None:
    settings = Settings.from_env(
        {"AGENTSTREAM_RUN_LEASE_SECONDS": "6", "AGENTSTREAM_RUN_TAKEOVER": "off"}
    )
    assert (settings.run_lease_seconds, settings.run_takeover) == (6.0, False)
    assert (Settings.from_env({}).run_lease_seconds, Settings.from_env({}).run_takeover) == (
        15.0,
        True,
    )
    for bad in ("0", "0.5", "nan"):
        with pytest.raises(SettingsError, match="AGENTSTREAM_RUN_LEASE_SECONDS must be at least 1"):
            Settings.from_env({"AGENTSTREAM_RUN_LEASE_SECONDS": bad}).check()
