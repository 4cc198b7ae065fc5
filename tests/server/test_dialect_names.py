"""Runs keep the name of the dialect that started them, so any worker can continue them in
its protocol: the modules were renamed for their products (``ops``, ``workflow``), the names
stored with runs were not. A run recorded under the old names still replays."""

from __future__ import annotations

import pytest

from agentstream import Agent
from agentstream.events import RunCompleted, RunStarted, TextDelta
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.dialects import BUILT_IN, ops, workflow
from tests.server.conftest import Serve
from tests.server.helpers import parse_sse

LOCAL = Principal(user_id="local")
"""Who calls in anonymous local mode."""


def test_the_renamed_modules_keep_the_names_their_runs_are_stored_under() -> None:
    assert (ops.DIALECT.name, workflow.DIALECT.name) == ("agent", "ichor")
    assert len({d.name for d in BUILT_IN}) == len(BUILT_IN)


@pytest.mark.parametrize(
    ("name", "frames"),
    [
        ("agent", [("start", None), ("token", "Hello"), ("done", None)]),
        ("ichor", [("content_chunk", "Hello"), ("message_complete", None)]),
    ],
)
def test_a_run_stored_under_an_old_name_replays_in_its_protocol(
    serve: Serve, name: str, frames: list[tuple[str, str | None]]
) -> None:
    server = serve(Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]})))
    broker = server.app.state.server.runner.broker
    run_id = f"old-{name}"

    async def recorded() -> None:
        # What a server of before the rename kept with the run and in its log.
        await broker.open_run(run_id, LOCAL, {"dialect": name, "options": {}})
        for event in (
            RunStarted(run_id=run_id, seq=0),
            TextDelta(run_id=run_id, seq=1, text="Hello"),
            RunCompleted(run_id=run_id, seq=2, message="Hello"),
        ):
            broker.publish(event)
        await broker.close_run(run_id)

    server.call(recorded())
    with server.client() as client:
        replayed = client.get(f"/api/runs/{run_id}/stream")
    assert replayed.status_code == 200, replayed.text
    seen = [
        (m.event or m.data.get("type"), m.data.get("content") or m.data.get("chunk"))
        for m in parse_sse(replayed.text)
    ]
    assert seen == frames
