"""How the runs of one conversation take turns: one answer at a time, on any worker.

A conversation the client names is held by the run answering it, from before its user
message is stored until its end is stored (:meth:`~agentstream.runs.broker.RunBroker.hold`):
in one process, one step of the event loop decides; with Redis, one script on the
conversation's ``active:`` key, which a run loses with its worker's lease when the worker
dies. So two messages for one conversation that reach two workers in the same millisecond
never run two answers at once, and a new conversation (its id is not known to anyone yet) is
held from its first message.

A message that finds its conversation held follows its policy
(:data:`~agentstream.runs.request.DoubleTexting`, the request's or the deployment's):

* ``reject``: :class:`~agentstream.errors.ConversationBusy` (409) before anything is stored;
* ``queue``: the message is stored and its stream opens at once; its run waits
  (:func:`wait_turn`, behind any message stored before it that waits too) and, once it holds
  the conversation, reads the history again, so the model sees the exchange before it whole;
* ``interrupt``: the run in progress is stopped as a stop button stops it (its partial answer
  stored, shown as interrupted, and seen by the model), and the new message is answered once
  that run has let go.

Answering a question again (``Branch(again=True)``) while the answer to it is being written
would leave that answer nothing to stand beside, so it is never queued behind it: it is
refused unless it interrupts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from agentstream.agent import CancelToken
from agentstream.errors import ConversationBusy
from agentstream.principal import Principal
from agentstream.runs.broker import RunBroker
from agentstream.runs.request import DoubleTexting

__all__ = [
    "INTERRUPTED_REASON",
    "INTERRUPT_WAIT_SECONDS",
    "QUEUE_POLL_SECONDS",
    "YIELD_SECONDS",
    "take_turn",
    "wait_turn",
]

INTERRUPTED_REASON = "new_message"
"""Why a run stopped for a newer message ended: its ``run_cancelled`` reason, stored with it."""

INTERRUPT_WAIT_SECONDS = 30.0
"""How long an interrupting message waits for the run it stopped to let go (a run whose
worker died lets go when its lease lapses, 15 s) before it is refused as under ``reject``."""

QUEUE_POLL_SECONDS = 0.25
"""How often a waiting run looks again (it is woken at once when a run of its own worker lets
go): a queued run, which a stop reaches within this time, and an interrupting message, which
stops the holder again (one still storing its message could not be stopped yet)."""

YIELD_SECONDS = 0.1
"""How long a queued run that found an earlier one waiting leaves the conversation to it
(longer than a worker takes to look again, so the earlier run finds it free)."""

Stop = Callable[[str, Principal, str], Awaitable[bool]]
"""Stops a run wherever it runs (:meth:`~agentstream.runs.Runner.request_cancel`)."""


async def take_turn(
    broker: RunBroker,
    stop: Stop,
    principal: Principal,
    conversation_id: str,
    run_id: str,
    policy: DoubleTexting,
    *,
    replacing: bool = False,
) -> bool:
    """Hold ``conversation_id`` for ``run_id`` before its message is stored: ``True`` when it
    holds it, ``False`` when it is to wait for its turn (``queue``). Raises
    :class:`~agentstream.errors.ConversationBusy` under ``reject`` (and for an answer again,
    ``replacing``, that does not interrupt)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + INTERRUPT_WAIT_SECONDS
    while (holder := await broker.hold(run_id, principal, conversation_id)) is not None:
        if policy == "queue" and not replacing:
            return False
        if policy != "interrupt" or loop.time() >= deadline:
            raise ConversationBusy(conversation_id, holder)
        # Again each time: a holder still storing its message cannot be stopped yet.
        await stop(holder, principal, INTERRUPTED_REASON)
        await broker.freed(principal, conversation_id, QUEUE_POLL_SECONDS)
    return True


async def wait_turn(
    broker: RunBroker,
    principal: Principal,
    conversation_id: str,
    run_id: str,
    cancel: CancelToken,
    before: Callable[[], Awaitable[Sequence[str]]] | None = None,
) -> bool:
    """Until ``run_id`` holds ``conversation_id`` (``True``), or is stopped while it waits
    (``False``: it then ends as a run stopped before it started). ``before`` lists the runs
    stored before it that have not ended: while one of them is alive (waiting too), it goes
    first, so queued messages are answered in the order they were stored."""
    while not cancel.cancelled:
        if await broker.hold(run_id, principal, conversation_id) is None:
            if before is None or not await broker.alive(await before()):
                return True
            await broker.release(run_id)  # an earlier message waits: its turn first
            await asyncio.sleep(YIELD_SECONDS)
            continue
        await broker.freed(principal, conversation_id, QUEUE_POLL_SECONDS)
    return False
