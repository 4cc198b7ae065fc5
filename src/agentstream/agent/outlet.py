"""Where a run's events leave the loop.

Every event of a run carries the next number of one sequence, and none is handed on once the
run has ended. The loop and its tool calls both emit, so the numbering lives here, in one
object that each of them holds, rather than in either.
"""

from __future__ import annotations

from collections.abc import Callable

from agentstream.events import RunEvent

__all__ = ["EventOutlet"]


class EventOutlet:
    """Numbers a run's events and hands them to ``put`` until :attr:`closed`."""

    __slots__ = ("closed", "put", "run_id", "seq")

    def __init__(self, run_id: str, put: Callable[[RunEvent], None]) -> None:
        self.run_id = run_id
        self.put = put
        """Hands an event on as it is, for a path that knows the run is open (text deltas)."""
        self.seq = 0
        """The number the next event gets."""
        self.closed = False

    def next_seq(self) -> int:
        seq = self.seq
        self.seq = seq + 1
        return seq

    def emit(self, event: RunEvent) -> None:
        if not self.closed:
            self.put(event)
