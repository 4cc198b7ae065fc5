from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentstream import Agent
from agentstream.chat import ChatConfig, ChatHooks, MissingAction
from agentstream.chat.actions import (
    ActionCall,
    ActionError,
    ActionFailed,
    ServerActions,
    UnknownAction,
)
from agentstream.events import SuggestedAction
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import ActionRequest, Runner, RunRequest
from agentstream.store import SqlConversationStore

from .helpers import USER, provider_of, scripted, shaped

ALICE = Principal(user_id="alice")


def _call(action: str, data: object = None) -> ActionCall:
    return ActionCall(action=action, data=data, principal=ALICE)


async def test_a_handler_gets_principal_and_data_and_its_outcome_becomes_the_user_turn() -> None:
    actions = ServerActions()
    seen: list[ActionCall] = []

    @actions.register("apply_schema", description="Apply the proposed schema")
    async def apply_schema(call: ActionCall) -> dict[str, object]:
        seen.append(call)
        return {"applied": call.data["schema_id"], "by": call.principal.user_id}

    text = await actions.run(_call("apply_schema", {"schema_id": 123}), label="Apply Changes")
    assert seen[0].data == {"schema_id": 123}
    assert text == (
        'The user ran the action "apply_schema" (Apply Changes).\n'
        'Outcome: {"applied": 123, "by": "alice"}'
    )
    assert [a.description for a in actions] == ["Apply the proposed schema"]


async def test_an_unknown_action_raises_before_anything_runs() -> None:
    with pytest.raises(UnknownAction, match="Unknown server action 'drop_db'") as info:
        await ServerActions().run(_call("drop_db"))
    assert isinstance(info.value, ActionError)
    assert isinstance(info.value, ValueError)


async def test_an_expected_failure_reaches_the_model_with_its_message() -> None:
    actions = ServerActions()

    async def fail(call: ActionCall) -> None:
        raise ActionFailed("schema 123 was already applied")

    actions.add("apply", fail)
    text = await actions.run(_call("apply"))
    assert (
        text
        == 'The user ran the action "apply".\nThe action failed: schema 123 was already applied'
    )


async def test_an_unexpected_failure_is_logged_and_hidden_from_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    actions = ServerActions()

    async def crash(call: ActionCall) -> None:
        raise RuntimeError("db password is hunter2")

    actions.add("apply", crash)
    with caplog.at_level(logging.ERROR, logger="agentstream.chat"):
        text = await actions.run(_call("apply"))
    assert text.endswith("The action failed unexpectedly.")
    assert "hunter2" not in text
    assert "server action 'apply' failed" in caplog.text


async def test_a_handler_returning_nothing_reads_as_done() -> None:
    actions = ServerActions()

    async def quiet(call: ActionCall) -> None:
        return None

    actions.add("ping", quiet)
    assert await actions.run(_call("ping"), label="ping") == (
        'The user ran the action "ping".\nOutcome: done.'
    )


# --- through the runner ---------------------------------------------------------------------------


async def test_a_server_action_round_trip(tmp_path: Path) -> None:
    actions = ServerActions()
    calls: list[ActionCall] = []

    @actions.register("apply_schema", description="Apply the proposed schema")
    async def apply_schema(call: ActionCall) -> str:
        calls.append(call)
        return f"Schema {call.data['schema_id']} applied: 2 tables created."

    offer = (
        "Ready.\n"
        'SUGGESTED_ACTIONS: [{"label": "Apply Changes", "action": "apply_schema", '
        '"handler": "server", "data": {"schema_id": 123}, "style": "primary"}]'
    )
    rules = [
        {"match": "ran the action", "turns": [{"text": "Done: the schema is applied."}]},
        {"turns": [{"text": offer}]},
    ]
    agent = Agent(model=ScriptedProvider({"rules": rules}))
    store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    try:
        runner = Runner(agent, store=store, hooks=ChatHooks(ChatConfig(server_actions=actions)))
        first = await runner.begin(RunRequest(message="Propose a schema", principal=USER))
        offered = shaped([e async for e in first.events()]).suggested_actions
        assert offered == (
            SuggestedAction(
                label="Apply Changes",
                action="apply_schema",
                handler="server",
                data={"schema_id": 123},
                style="primary",
            ),
        )
        clicked = offered[0]
        second = await runner.begin(
            RunRequest(
                message=clicked.label,
                principal=USER,
                conversation_id=first.conversation_id,
                interaction_type="action_executed",
                action=ActionRequest(action=clicked.action, data=clicked.data),
            )
        )
        done = shaped([e async for e in second.events()])
    finally:
        await store.close()
    [call] = calls
    assert call.principal == USER
    assert call.data == {"schema_id": 123}
    assert call.conversation_id == first.conversation_id
    seen = provider_of(agent).requests[-1].messages[-1]
    assert getattr(seen, "content", None) == (
        'The user ran the action "apply_schema" (Apply Changes).\n'
        "Outcome: Schema 123 applied: 2 tables created."
    )
    assert done.message == "Done: the schema is applied."
    assert '`apply_schema` (handler "server"): Apply the proposed schema' in (
        provider_of(agent).requests[0].system
    )


async def test_an_unknown_action_is_rejected_before_anything_is_stored(tmp_path: Path) -> None:
    agent = Agent(model=scripted({"text": "never"}))
    store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'b.db'}")
    try:
        runner = Runner(agent, store=store, hooks=ChatHooks())
        with pytest.raises(UnknownAction):
            await runner.begin(
                RunRequest(
                    message="Apply",
                    principal=USER,
                    interaction_type="action_executed",
                    action=ActionRequest(action="drop_everything"),
                )
            )
        with pytest.raises(MissingAction):
            await runner.begin(
                RunRequest(message="Apply", principal=USER, interaction_type="action_executed")
            )
        page = await store.list_conversations(USER)
    finally:
        await store.close()
    assert provider_of(agent).requests == []
    assert page.items == ()
