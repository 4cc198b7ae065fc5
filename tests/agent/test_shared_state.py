"""A run's shared state in the loop, without a server: the snapshot it starts from, the
patches its tools' changes become, and the changes it refuses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentstream import Agent, RunInput, ToolContext, tool
from agentstream.events import (
    RunCompleted,
    RunWarning,
    StateDelta,
    StateSnapshot,
    ToolCallFinished,
    event_from_json,
    event_to_json,
)
from agentstream.providers.scripted import ScriptedProvider
from agentstream.state import apply_patch


@tool
async def pick(ctx: ToolContext, key: str, value: str, wait: float = 0.0) -> str:
    """Set ``key`` in the state (after ``wait`` seconds)."""
    await asyncio.sleep(wait)
    ctx.state.setdefault("picked", {})[key] = value
    return "ok"


@tool
def keep_object(ctx: ToolContext, key_kind: str = "value") -> str:
    """Put something that is not JSON in the state: a value, or a key that is not a string."""
    if key_kind == "value":
        ctx.state["when"] = object()
    else:
        ctx.state[1] = "one"  # type: ignore[index]
    return "ok"


def agent(*calls: dict[str, Any]) -> Agent:
    script = {"turns": [{"tool_calls": list(calls)}, {"text": "Done."}]}
    return Agent(model=ScriptedProvider(script), tools=[pick, keep_object])


async def run(agent: Agent, state: dict[str, Any] | None) -> tuple[list[Any], dict[str, Any]]:
    handle = agent.run(RunInput(message="go", state=state))
    events = [event async for event in handle]
    return events, handle.state


async def test_calls_of_one_round_each_change_their_part() -> None:
    slow = {
        "name": "pick",
        "id": "a",
        "arguments": {"key": "colour", "value": "teal", "wait": 0.05},
    }
    fast = {"name": "pick", "id": "b", "arguments": {"key": "size", "value": "L"}}
    events, state = await run(agent(slow, fast), {"picked": {}, "view": "grid"})
    snapshot = next(e for e in events if isinstance(e, StateSnapshot))
    assert events.index(snapshot) == 1  # right after run_started
    deltas = [e for e in events if isinstance(e, StateDelta)]
    assert [d.call_id for d in deltas] == ["b", "a"]  # in the order the calls ended
    for delta in deltas:  # each just before its call's end
        after = events[events.index(delta) + 1]
        assert isinstance(after, ToolCallFinished) and after.call_id == delta.call_id
    rebuilt = snapshot.state
    for delta in deltas:
        rebuilt = apply_patch(rebuilt, delta.patch)
    assert rebuilt == state == {"picked": {"colour": "teal", "size": "L"}, "view": "grid"}


async def test_a_run_without_state_announces_none_but_its_tools_may_write() -> None:
    events, state = await run(
        agent({"name": "pick", "id": "a", "arguments": {"key": "k", "value": "v"}}), None
    )
    assert not [e for e in events if isinstance(e, StateSnapshot)]
    [delta] = [e for e in events if isinstance(e, StateDelta)]
    assert delta.patch == ({"op": "add", "path": "/picked", "value": {"k": "v"}},)
    assert state == {"picked": {"k": "v"}}


@pytest.mark.parametrize("key_kind", ["value", "key"])
async def test_a_change_that_is_not_json_is_refused_with_a_warning(key_kind: str) -> None:
    call = {"name": "keep_object", "id": "a", "arguments": {"key_kind": key_kind}}
    events, state = await run(agent(call), {"a": 1})
    assert isinstance(events[-1], RunCompleted)
    assert not [e for e in events if isinstance(e, StateDelta)]
    [warning] = [e for e in events if isinstance(e, RunWarning)]
    assert warning.code == "state_not_changed" and "keep_object" in warning.message
    assert state == {"a": 1}


def test_the_state_events_cross_a_process_boundary_as_they_are() -> None:
    for event in (
        StateSnapshot(run_id="r", seq=1, state={"filters": {"year_from": 2020}, "n": 1.5}),
        StateDelta(
            run_id="r",
            seq=4,
            patch=({"op": "add", "path": "/a~1b", "value": [1, True, None]},),
            call_id="c1",
        ),
    ):
        assert event_from_json(event_to_json(event)) == event
