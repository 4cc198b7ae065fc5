"""How much of a conversation a run reads from the store: what its model can be sent.

The agent fits every request into the model's window (:mod:`agentstream.agent.budget`), so
the exchanges it would leave out need not be read at all: reading them made a turn's cost
grow with the conversation (every message parsed, validated and estimated, to be dropped).
The store reads the active path back from its leaf, whole exchanges at a time, until it has
read the characters the model's window could hold (:func:`~agentstream.store.tree.recent_path`);
the agent then compacts that recent part as it would have compacted the whole.

The bound is in characters of stored JSON. The agent estimates a token for every three
characters of ASCII text (fewer for anything else), and a message's JSON holds a little
more than its text, so four characters a token reads at least what the agent could keep,
with room for the framing. A model whose window is not known (no profile gives it, no
vendor refused it yet) is read as far as ``default_window`` tokens reach; a refusal then
teaches the agent its window, and the next runs read by that.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentstream.agent import Agent

__all__ = ["HistoryReading"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryReading:
    """How far back a run reads its conversation (``Runner(reading=...)``)."""

    default_window: int = 128_000
    """The window, in tokens, read for a model whose window is not known."""
    chars_per_token: int = 4
    """Characters of stored messages read per token of the window."""
    whole: bool = False
    """Read the whole conversation for every run (as an agent that does not compact needs)."""

    def __post_init__(self) -> None:
        if self.default_window < 1 or self.chars_per_token < 1:
            raise ValueError("the default window and the characters per token must be over 0")

    def bound(self, agent: Agent, model: str) -> int | None:
        """The characters of ``model``'s conversation to read for ``agent``; None: all of
        it (an agent that sends the history uncompacted)."""
        if self.whole or not agent.context_limits.compact:
            return None
        known = [
            w for w in (agent.profile(model).context_window, agent.learned_windows.get(model)) if w
        ]
        return (min(known) if known else self.default_window) * self.chars_per_token
