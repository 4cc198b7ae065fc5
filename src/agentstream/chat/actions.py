"""Suggested actions (chat tray), and the server side of the ones that run on the server.

A suggested action has a ``handler``: ``"client"`` actions run in the browser (close the chat,
navigate), ``"server"`` actions are sent back in the next request (``interaction_type``
``"action_executed"`` with ``action: {action, data}``). :class:`ServerActions` holds the
handlers for the latter. When such a request arrives, the handler runs *before* the model is
called and its outcome becomes the user turn the model answers::

    The user ran the action "apply_schema" (Apply Changes).
    Outcome: Schema 123 applied: 2 tables created.

so the model can confirm what happened and suggest what comes next, in the same stream.

Errors, for the dialect to turn into HTTP statuses before anything is streamed::

    ActionError (ValueError)          -> 400
    ├── UnknownAction                 an action no handler is registered for
    └── MissingAction                 interaction_type "action_executed" without an action

A handler that fails does not fail the request: the model is told the action failed (with the
message of an :class:`ActionFailed`, or a generic one for any other exception, which is logged)
and explains it to the user, as with a failing tool.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from agentstream.principal import Principal
from agentstream.runs.request import RefusedRequest

__all__ = [
    "ActionCall",
    "ActionError",
    "ActionFailed",
    "ActionHandler",
    "ClientAction",
    "MissingAction",
    "ServerAction",
    "ServerActions",
    "UnknownAction",
]

log = logging.getLogger("agentstream.chat")


class ActionError(RefusedRequest):
    """The request names an action that cannot run. Safe to show the client (HTTP 400)."""

    def __init__(self, message: str) -> None:
        super().__init__("action", message)


class UnknownAction(ActionError):
    """The client asked for a server action nobody registered (a 400 naming it)."""

    def __init__(self, action: str) -> None:
        self.action = action
        super().__init__(f"Unknown server action {action!r}.")


class MissingAction(ActionError):
    """An ``action_executed`` request without its ``action`` object (a 400)."""

    def __init__(self) -> None:
        super().__init__('interaction_type "action_executed" needs an "action" object.')


class ActionFailed(Exception):
    """Raised by a handler for an expected failure; its message reaches the model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientAction:
    """An action the browser runs (``handler: "client"``), described so the model can suggest
    it."""

    name: str
    description: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionCall:
    """What a server action handler receives. ``data`` comes from the client: validate it."""

    action: str
    data: Any
    principal: Principal
    context: Any = None
    conversation_id: str | None = None


ActionHandler = Callable[[ActionCall], Awaitable[Any]]
"""Returns the outcome: a string, or any JSON-able value (serialised for the model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerAction:
    name: str
    handler: ActionHandler
    description: str = ""


class ServerActions:
    """The registry of server action handlers::

    actions = ServerActions()

    @actions.register("apply_schema", description="Apply the proposed schema")
    async def apply_schema(call: ActionCall) -> str:
        ...
    """

    def __init__(self) -> None:
        self._actions: dict[str, ServerAction] = {}

    def register(
        self, name: str, *, description: str = ""
    ) -> Callable[[ActionHandler], ActionHandler]:
        def add(handler: ActionHandler) -> ActionHandler:
            self.add(name, handler, description=description)
            return handler

        return add

    def add(self, name: str, handler: ActionHandler, *, description: str = "") -> None:
        self._actions[name] = ServerAction(name=name, handler=handler, description=description)

    def __contains__(self, name: object) -> bool:
        return name in self._actions

    def __iter__(self) -> Iterator[ServerAction]:
        return iter(self._actions.values())

    def __len__(self) -> int:
        return len(self._actions)

    def get(self, name: str) -> ServerAction:
        found = self._actions.get(name)
        if found is None:
            raise UnknownAction(name)
        return found

    async def run(self, call: ActionCall, label: str = "") -> str:
        """Run the handler for ``call`` and return the user turn the model should answer.
        Raises :class:`UnknownAction` before anything runs."""
        action = self.get(call.action)
        try:
            outcome = await action.handler(call)
        except ActionFailed as exc:
            result = f"The action failed: {exc}"
        except Exception:
            log.exception("server action %r failed", call.action)
            result = "The action failed unexpectedly."
        else:
            result = "Outcome: " + _as_text(outcome)
        named = f'"{call.action}"' + (f" ({label})" if label and label != call.action else "")
        return f"The user ran the action {named}.\n{result}"


def _as_text(outcome: Any) -> str:
    if outcome is None:
        return "done."
    if isinstance(outcome, str):
        return outcome
    return json.dumps(outcome, default=str, ensure_ascii=False)
