"""How far back a run reads its conversation: by its model's window (the profile's, the one
a refusal taught, else the default), all of it for an agent that does not compact; and a
runner on a real store gives its run only the latest whole exchanges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.agent import ContextLimits
from agentstream.errors import ContextOverflow
from agentstream.messages import UserMessage
from agentstream.principal import Principal
from agentstream.providers.profiles import ModelProfiles
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import HistoryReading, Runner, RunRequest, StartedRun
from agentstream.server.settings import Settings, SettingsError
from agentstream.store import SqlConversationStore

from ..store.helpers import exchange

MODEL = "scripted:scripted"


def agent(window: int | None = None, **options: Any) -> Agent:
    profiles = ModelProfiles()
    if window is not None:
        profiles = profiles.with_profiles({"scripted:*": {"context_window": window}})
    return Agent(
        model=ScriptedProvider({"turns": [{"text": "Noted."}]}), profiles=profiles, **options
    )


def test_the_bound_follows_the_model_window() -> None:
    reading = HistoryReading()
    assert reading.bound(agent(8_000), MODEL) == 32_000
    assert reading.bound(agent(), MODEL) == 128_000 * 4
    assert HistoryReading(default_window=1_000).bound(agent(), MODEL) == 4_000


def test_a_learned_window_reads_less() -> None:
    learning = agent(100_000)
    learning.learned_windows.learn(
        MODEL, ContextOverflow("too long", window=10_000), estimate=20_000, max_tokens=0
    )
    assert HistoryReading().bound(learning, MODEL) == 10_000 * 4


def test_an_agent_that_does_not_compact_reads_it_all() -> None:
    assert (
        HistoryReading().bound(agent(8_000, context_limits=ContextLimits(compact=False)), MODEL)
        is None
    )
    assert HistoryReading(whole=True).bound(agent(8_000), MODEL) is None


def test_the_default_window_is_a_setting() -> None:
    env = {"AGENTSTREAM_DEFAULT_CONTEXT_WINDOW": "32000"}
    assert Settings.from_env(env).default_context_window == 32_000
    assert Settings.from_env({}).default_context_window == 128_000
    with pytest.raises(SettingsError):
        Settings.from_env({"AGENTSTREAM_DEFAULT_CONTEXT_WINDOW": "0"}).check()


class Watched(SqlConversationStore):
    """The store, remembering the history each run started with."""

    started: list[StartedRun]

    async def start_run(self, *args: Any, **kwargs: Any) -> StartedRun:
        started = await super().start_run(*args, **kwargs)
        self.started.append(started)
        return started


async def test_a_run_continues_only_the_latest_exchanges(tmp_path: Path) -> None:
    store = await Watched.open(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    store.started = []
    alice = Principal(user_id="alice")
    try:
        cid = None
        for n in range(50):
            cid = await exchange(store, alice, f"Q{n} " + "word " * 40, "A " + "word " * 40, cid)
        runner = Runner(agent(2_000, max_tokens=200), store=store)
        session = await runner.begin(
            RunRequest(message="Last?", principal=alice, conversation_id=cid)
        )
        [event async for event in session.events()]
        await runner.aclose()
        read = list(store.started[-1].history)
        assert isinstance(read[0], UserMessage) and 1 < len(read) < 40
        assert read[-2].content.startswith("Q49 ")  # type: ignore[union-attr]
        assert len((await store.get_conversation(alice, cid)).messages) == 102  # type: ignore[arg-type]
    finally:
        await store.close()
