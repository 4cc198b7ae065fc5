"""Who watches runs go by: metrics, traces, limits, an application's own accounting.

Everything downstream of the loop reads one stream of canonical events, and so do observers.
A :class:`RunObserver` is asked, as each run starts, for a :class:`RunWatch` of that run; the
watch is handed every event of the run as the run publishes it, in the run's own task, and
hears when the run has ended (with what it used and cost). Nothing else in the pipeline knows
what watches it: the runner and its sessions call the watches they were given and no more.

A watch is called for the per-token events (text, reasoning and tool-argument deltas) only
if it says it wants them (:attr:`RunWatch.deltas`): the others never pay for a run's deltas,
and ``event`` must then be cheap for them (a type check and return for what it has no use
for) and must not block. A runner with no observers pays nothing: its sessions then forward
events without looking for watches at all. An exception a watch raises is logged and the run
goes on: an observer never breaks a run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from agentstream.events import ReasoningDelta, RunEvent, TextDelta, ToolCallDelta

if TYPE_CHECKING:
    from agentstream.runs.session import RunSession

__all__ = ["RunObserver", "RunWatch", "tell_ended", "watching"]

log = logging.getLogger("agentstream.runs")


class RunWatch(Protocol):
    """Watches one run (see :mod:`agentstream.runs.observers`)."""

    deltas: bool
    """Whether :meth:`event` is given the per-token events too (``text_delta``,
    ``reasoning_delta``, ``tool_call_delta``), read once as the run starts. A text or
    reasoning part's first token is announced by its ``part_started``."""

    def event(self, event: RunEvent) -> None:
        """An event of the run, as it is published (the terminal event last)."""
        ...

    def ended(self, session: RunSession) -> None:
        """The run has ended and its end is stored: :attr:`RunSession.usage` is what it used
        and cost, :attr:`RunSession.status` how it ended."""
        ...


class RunObserver(Protocol):
    """Gives each run a watch, or none."""

    def watch(self, session: RunSession) -> RunWatch | None:
        """Run ``session`` is about to start: called as it opens, in its request's context
        (the HTTP request's span is the current one there), so that a watch may add what
        the run carries to readers on other workers (``session.carried``). The run's own
        task is a copy of that context."""
        ...


_DELTAS = (TextDelta, ReasoningDelta, ToolCallDelta)


def watching(
    forward: Callable[[RunEvent], None], watches: Sequence[RunWatch]
) -> Callable[[RunEvent], None]:
    """``forward``, with every watch handed each event first (the per-token events only to
    the watches that want them)."""
    every = tuple(watches)
    tokens = tuple(watch for watch in watches if watch.deltas)
    text, reasoning, arguments = _DELTAS

    def forward_watched(event: RunEvent) -> None:
        kind = type(event)
        told = tokens if kind is text or kind is reasoning or kind is arguments else every
        for watch in told:
            try:
                watch.event(event)
            except Exception:
                log.exception("a run watch failed on %s", event.type)
        forward(event)

    return forward_watched


def tell_ended(session: RunSession, watches: Sequence[RunWatch]) -> None:
    """Tell every watch the run has ended."""
    for watch in watches:
        try:
            watch.ended(session)
        except Exception:
            log.exception("a run watch failed at the end of run %s", session.run_id)
