"""How much of a conversation a model call may carry: the budget, and what is learned when a
vendor refuses a request as too long anyway.

A model's window (its profile's ``context_window``, :mod:`agentstream.providers.profiles`)
holds the prompt and the answer, so a request's budget is the window less the answer's limit
(the request's ``max_tokens``, at most half the window) and a margin
(:attr:`ContextLimits.margin` of the window). A
model with no known window is sent everything, and its vendor's refusal says how much fits:
:class:`LearnedWindows` keeps that for the process, so the next runs of the model are
compacted before they are sent instead of being refused first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentstream.agent.compaction import Compaction, Compactor
from agentstream.agent.summaries import ContextSummary, with_summary
from agentstream.agent.tokens import TokenCounter, text_tokens, tool_tokens
from agentstream.errors import ContextOverflow
from agentstream.events import ContextReport
from agentstream.messages import Message
from agentstream.providers.base import ToolSpec
from agentstream.providers.profiles import ModelProfile

__all__ = ["ContextBudget", "ContextLimits", "LearnedWindows"]

BELOW_REFUSED = 0.75
"""The share of a refused request's size taken as the model's window when the vendor's error
states no window: below the size refused, without knowing by how much."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextLimits:
    """How a conversation is fitted into a model's window (``Agent(context_limits=...)``).

    ``margin`` is the share of the window left free beside the answer's limit (for the
    estimate's error and the vendors' own framing); ``tool_result_share`` the share of the
    window one tool result may take before it is cut; ``compact=False`` sends the history
    as it is, whatever its size (a refusal then fails the run).

    ``summarize`` has the model summarize the exchanges about to be left out
    (:mod:`agentstream.agent.summaries`); off, they are left out unsummarized. A summary
    is at most ``summary_tokens`` long (and an eighth of the window), and covers enough
    exchanges that the history sent after it takes at most ``keep`` of the room beside it,
    so that the next turns fit without summarizing again."""

    margin: float = 0.05
    tool_result_share: float = 0.25
    compact: bool = True
    summarize: bool = True
    summary_tokens: int = 2_000
    keep: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.margin < 0.5:
            raise ValueError(f"context margin must be from 0 to under 0.5, not {self.margin}")
        if not 0 < self.tool_result_share <= 1:
            raise ValueError(
                f"tool_result_share must be over 0 and at most 1, not {self.tool_result_share}"
            )
        if not 0 < self.keep <= 1:
            raise ValueError(f"keep must be over 0 and at most 1, not {self.keep}")
        if self.summary_tokens < 1:
            raise ValueError(f"summary_tokens must be over 0, not {self.summary_tokens}")


class LearnedWindows:
    """Windows learned from vendors' refusals, by model id, for as long as the process runs
    (an agent holds one for all its runs). A window is in the estimate's tokens
    (:mod:`agentstream.agent.tokens`): where a vendor states both its window and the size it
    refused, the window is scaled by how far the estimate fell short, so the next request
    fits even when the estimate runs low for this model."""

    __slots__ = ("_windows",)

    def __init__(self) -> None:
        self._windows: dict[str, int] = {}

    def get(self, model: str) -> int | None:
        return self._windows.get(model)

    def learn(self, model: str, error: ContextOverflow, *, estimate: int, max_tokens: int) -> int:
        """Learn from ``error``, the refusal of a request estimated at ``estimate`` tokens
        asking for ``max_tokens`` more; returns the model's window from now on."""
        sent = estimate + max_tokens
        if error.window is not None and error.requested:
            window = error.window * min(estimate, error.requested) // error.requested
        elif error.window is not None:
            window = min(error.window, int(sent * BELOW_REFUSED))
        else:
            window = int(sent * BELOW_REFUSED)
        known = self._windows.get(model)
        window = max(1, window if known is None else min(known, window))
        self._windows[model] = window
        return window


class ContextBudget:
    """One run's fitting of its requests into its model's window: the run's estimates and
    compactor, the window from the model's profile or from what was learned of it."""

    __slots__ = (
        "_compactor",
        "_count",
        "_current",
        "_learned",
        "_limits",
        "_model",
        "_profile",
        "_summary",
        "_system",
        "_tools",
    )

    def __init__(
        self,
        model: str,
        profile: ModelProfile,
        limits: ContextLimits,
        learned: LearnedWindows,
        *,
        system: str,
        tools: Sequence[ToolSpec],
        current: int | None = None,
    ) -> None:
        self._model = model
        self._profile = profile
        self._limits = limits
        self._learned = learned
        self._count = TokenCounter()
        self._compactor = Compactor(self._count)
        self._system = text_tokens(system)
        self._tools = tool_tokens(tools)
        """The system prompt and the tools: the same in every request of the run."""
        self._summary = 0
        """The summary's section of the system prompt (:meth:`summarized`)."""
        self._current = current
        """Where the exchange the run answers starts in its messages (default: at the latest
        user message), always sent whole."""

    @property
    def window(self) -> int | None:
        """The model's window: the smaller of its profile's and the learned one."""
        windows = [w for w in (self._profile.context_window, self._learned.get(self._model)) if w]
        return min(windows) if windows else None

    @property
    def _fixed(self) -> int:
        return self._system + self._tools + self._summary

    @property
    def summary_tokens(self) -> int:
        """The longest summary to ask for: the limits', and no more than an eighth of the
        window."""
        window = self.window
        limit = self._limits.summary_tokens
        return limit if window is None else max(1, min(limit, window // 8))

    def summarized(self, summary: ContextSummary | None) -> None:
        """From now on, requests carry ``summary`` in their system prompt."""
        self._summary = text_tokens(with_summary("", summary)) if summary is not None else 0

    def fit(self, messages: Sequence[Message], max_tokens: int, *, start: int = 0) -> Compaction:
        """What to send of ``messages`` (see :mod:`agentstream.agent.compaction`), which are
        the run's messages from ``start`` on (those before it are summarized)."""
        window = self.window
        if window is None or not self._limits.compact:
            return Compaction(
                messages=tuple(messages), tokens=self._fixed + self._count.total(messages)
            )
        return self._compact(messages, self._budget(window, max_tokens), start)

    def to_summarize(self, messages: Sequence[Message], max_tokens: int, *, start: int = 0) -> int:
        """How many of ``messages`` (the oldest, whole exchanges) to summarize so that the
        rest takes at most :attr:`ContextLimits.keep` of the room beside a summary; 0 when
        none can be (only the exchange being answered is left)."""
        window = self.window
        if window is None:
            return 0
        budget = self._budget(window, max_tokens)
        beside = (
            self._system
            + self._tools
            + self.summary_tokens
            + text_tokens(with_summary("", ContextSummary(text="", exchanges=0)))
        )
        target = beside + int(max(0, budget - beside) * self._limits.keep)
        return self._compact(messages, target, start).first_kept

    def report(
        self, sent: Compaction, max_tokens: int, summary: ContextSummary | None
    ) -> ContextReport:
        """How full the window is with ``sent`` (a request's compaction): ``max_tokens`` is
        counted as the room kept for the answer, at most half the window."""
        summarized = summary.exchanges if summary is not None else 0
        window = self.window
        if window is not None:
            max_tokens = min(max_tokens, window // 2)
        return ContextReport(
            window=window,
            tokens=sent.tokens,
            system=self._system,
            tools=self._tools,
            summary=self._summary,
            history=max(0, sent.tokens - self._fixed),
            max_tokens=max_tokens,
            left_out=sent.dropped + summarized,
            summarized=summarized,
        )

    def _budget(self, window: int, max_tokens: int) -> int:
        # An answer's limit as large as the window (Ollama's 4,096 tokens, asked for 4,096)
        # would leave the conversation nothing: half the window is kept for it at most.
        reserve = min(max_tokens, window // 2)
        return window - reserve - int(window * self._limits.margin)

    def _compact(self, messages: Sequence[Message], budget: int, start: int) -> Compaction:
        window = self.window
        assert window is not None
        current = None if self._current is None else self._current - start
        return self._compactor.compact(
            messages,
            budget=budget,
            fixed=self._fixed,
            result_limit=max(1, int(window * self._limits.tool_result_share)),
            current=current,
        )

    def refused(self, error: ContextOverflow, sent: Compaction, max_tokens: int) -> bool:
        """Learn from the vendor's refusal of ``sent``; whether a smaller request can be made
        (compaction is on, and the window learned is smaller than what was sent)."""
        window = self._learned.learn(
            self._model, error, estimate=sent.tokens, max_tokens=max_tokens
        )
        return self._limits.compact and window < sent.tokens + max_tokens
