"""MCP servers as tool sources, against real servers built with the ``mcp`` package: a stdio
subprocess and a streamable-HTTP server on loopback (uvicorn), driven through the agent loop
with the scripted model."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentstream.agent import Agent, RunInput
from agentstream.events import RunCompleted, RunWarning, ToolCallFinished, ToolProgress
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools.mcp import MCPTools
from tests.server.helpers import LiveServer

from . import mcp_servers

SERVER = str(Path(mcp_servers.__file__))
ALICE = Principal(user_id="alice", token="alice-token-123")


@pytest.fixture
async def weather() -> AsyncIterator[MCPTools]:
    source = MCPTools.stdio(sys.executable, [SERVER], label="weather", exclude={"forecast"})
    yield source
    await source.aclose()


@pytest.fixture
def notes_server() -> Iterator[LiveServer]:
    mcp_servers.seen_authorization.clear()
    server = LiveServer(mcp_servers.notes_app()).start()  # type: ignore[arg-type]
    yield server
    server.stop()


def calls(*turns: list[tuple[str, dict[str, Any]]], answer: str = "Done.") -> ScriptedProvider:
    script = [{"tool_calls": [{"name": n, "arguments": a} for n, a in turn]} for turn in turns]
    return ScriptedProvider({"turns": [*script, {"text": answer}]})


async def run(agent: Agent, principal: Principal = ALICE) -> list[Any]:
    return [e async for e in agent.run(RunInput(message="go", principal=principal))]


def finished(events: list[Any]) -> dict[str, ToolCallFinished]:
    return {e.name: e for e in events if isinstance(e, ToolCallFinished)}


async def test_tools_are_listed_filtered_and_cached(weather: MCPTools) -> None:
    first = await weather.load(ALICE, [])
    assert sorted(t.name for t in first) == ["count_stations", "get_weather", "reboot_station"]
    schema = next(t for t in first if t.name == "get_weather").parameters
    assert schema["required"] == ["city"]
    started = weather._connections[None]
    again = await weather.load(ALICE, [])
    assert [t.name for t in again] == [t.name for t in first]
    assert weather._connections[None] is started  # the same server process, listed once


async def test_a_tool_the_server_marks_idempotent_is_declared_so(
    weather: MCPTools,
) -> None:
    """The server's ``idempotentHint`` is the tool's ``idempotent``; without it, a tool is
    not."""
    tools = {t.name: t for t in await weather.load(ALICE, [])}
    assert tools["get_weather"].idempotent
    assert not tools["reboot_station"].idempotent


async def test_calls_progress_and_errors_through_the_loop() -> None:
    source = MCPTools.stdio(sys.executable, [SERVER], label="weather")
    model = calls(
        [("get_weather", {"city": "Paris"}), ("count_stations", {"region": "Alps"})],
        [("forecast", {"city": "Oslo"}), ("get_weather", {"town": "Oslo"})],
    )
    try:
        events = await run(Agent(model=model, tools=[source]))
    finally:
        await source.aclose()

    assert isinstance(events[-1], RunCompleted), events[-1]
    done = finished(events)
    assert done["count_stations"].result == "Alps: 3 stations"
    assert not done["count_stations"].is_error
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [(p.message, p.fraction) for p in progress] == [
        ("scanning Alps 1/3", pytest.approx(1 / 3)),
        ("scanning Alps 2/3", pytest.approx(2 / 3)),
        ("scanning Alps 3/3", 1.0),
    ]
    assert done["forecast"].is_error
    assert "no forecast for Oslo" in done["forecast"].result
    bad = [e for e in events if isinstance(e, ToolCallFinished) and e.name == "get_weather"]
    assert (bad[0].result, bad[0].is_error) == ("18°C and sunny in Paris", False)
    assert bad[1].is_error and "city" in bad[1].result  # checked against the server's schema


async def test_a_server_dying_mid_call_is_a_tool_error_and_the_run_goes_on() -> None:
    source = MCPTools.stdio(sys.executable, [SERVER], label="weather")
    model = calls([("reboot_station", {"station": "S1"})], [("get_weather", {"city": "Rome"})])
    try:
        events = await run(Agent(model=model, tools=[source], tool_timeout=30))
    finally:
        await source.aclose()

    assert isinstance(events[-1], RunCompleted), events[-1]
    calls_done = [e for e in events if isinstance(e, ToolCallFinished)]
    assert calls_done[0].is_error
    assert "weather" in calls_done[0].result
    # the next call starts the server again
    assert calls_done[1].result == "18°C and sunny in Rome"


async def test_a_server_that_does_not_start_is_a_tool_fallback() -> None:
    source = MCPTools.stdio(sys.executable, ["-c", "import sys; sys.exit(7)"], label="broken")
    model = ScriptedProvider({"turns": [{"text": "No tools, still here."}]})
    try:
        events = await run(Agent(model=model, tool_sources=[source]))
    finally:
        await source.aclose()

    warnings = [e for e in events if isinstance(e, RunWarning)]
    assert [w.code for w in warnings] == ["tool_fallback"]
    assert isinstance(events[-1], RunCompleted)
    assert "still here" in events[-1].message


async def test_http_server_with_the_callers_token(notes_server: LiveServer) -> None:
    source = MCPTools.http(f"{notes_server.url}/mcp", forward_token=True, prefix="notes_")
    model = calls([("notes_lookup_note", {"topic": "deploys"}), ("notes_list_topics", {})])
    try:
        events = await run(Agent(model=model, tools=[source]))
    finally:
        await source.aclose()

    done = finished(events)
    assert done["notes_lookup_note"].result == "note on deploys: ship on Fridays"
    assert "oncall" in done["notes_list_topics"].result
    assert mcp_servers.seen_authorization
    assert set(mcp_servers.seen_authorization) == {"Bearer alice-token-123"}


async def test_without_forwarding_no_token_is_sent(notes_server: LiveServer) -> None:
    source = MCPTools.http(f"{notes_server.url}/mcp", include={"lookup_note"})
    try:
        tools = await source.load(ALICE, [])
    finally:
        await source.aclose()
    assert [t.name for t in tools] == ["lookup_note"]
    assert set(mcp_servers.seen_authorization) == {None}
