"""Where a run taken over from a worker that died stands, so that the loop goes on with it
instead of starting it again.

The worker that takes a run over (:mod:`agentstream.runs.takeover`) reads the run's stored
messages and its event log and hands the loop a :class:`Resumption`: the numbers to go on
from (events, turns, parts, tool calls), the answer's text and tool history so far, and the
tool rounds the log shows but the store does not have yet (:class:`Round`). The loop then
finishes those rounds without running a tool twice (:data:`NOT_RETRIED_MESSAGE`) and asks the
model again from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentstream.agent.turns import PendingCall
from agentstream.events import (
    PartKind,
    Payload,
    ToolCallFinished,
    ToolHistoryEntry,
    Usage,
)
from agentstream.messages import AssistantMessage

__all__ = ["NOT_RETRIED_MESSAGE", "Resumption", "Round"]

NOT_RETRIED_MESSAGE = (
    "Interrupted, not run again: the server running this tool stopped before it returned, "
    "and the tool may have done part or all of its work. Tell the user it may or may not "
    "have happened."
)
"""The result the model reads for a call that was running when its worker died and whose
tool is not declared idempotent."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Round:
    """A tool round that the store does not hold the end of: the model's turn that asked for
    the calls (its text and calls, rebuilt from the log: reasoning and vendor data are not in
    the log and are left out), which calls' tools may have started (their arguments are in
    the log), and the results of those that finished."""

    turn: int
    assistant: AssistantMessage | None
    """``None``: the calls are those a person approved, of the open turn the run answers
    (their results join that turn's; see :mod:`agentstream.pending`)."""
    calls: tuple[PendingCall, ...]
    started: frozenset[str] = frozenset()
    finished: Mapping[str, ToolCallFinished] = field(default_factory=dict)
    ended: bool = False
    """The round's ``turn_finished`` is in the log (every call has its result)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resumption:
    """What the loop of a taken-over run goes on from (see the module docstring)."""

    seq: int
    """The next event's number: the log's last one plus one."""
    turn: int
    """The turn to go on with."""
    turn_open: bool = False
    """That turn's ``turn_started`` is already in the log (its model turn was cut short):
    the model is asked again within it."""
    parts: int = 0
    """How many text and reasoning parts the run has streamed (the next one's number)."""
    open_part: PartKind | None = None
    """The kind of the part the dead worker left open (ended before anything else)."""
    calls: int = 0
    """The next tool call's index in the run."""
    segments: tuple[str, ...] = ()
    """The text of each of the run's finished turns (the answer so far)."""
    usage: Usage = field(default_factory=Usage)
    """What the vendors reported for the run's finished model turns."""
    tool_history: tuple[ToolHistoryEntry, ...] = ()
    payloads: tuple[Payload, ...] = ()
    rounds: tuple[Round, ...] = ()
    """The rounds to finish before the model is asked again, oldest first."""
