"""What runs used and cost, summed: the lines of the usage report (``GET /api/usage``).

Each run's tokens and cost are entered in the store's usage ledger when it ends, however it
ends (see :class:`~agentstream.events.RunUsage`); a report sums them over a period of UTC
days, grouped by any of ``user``, ``tenant``, ``model`` and ``day``. A line says how many of
its runs had tokens estimated (a model call cut short, a vendor that reported nothing) and how
many had no price (a model nobody priced: its cost counts as 0 in ``cost_usd``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from agentstream.events import Usage

__all__ = ["USAGE_GROUPS", "UsageGroup", "UsageLine", "total"]

UsageGroup = Literal["user", "tenant", "model", "day"]
"""What a usage report can be grouped by."""
USAGE_GROUPS: tuple[UsageGroup, ...] = get_args(UsageGroup)


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageLine:
    """The runs of one group (``group``: the value of each grouped key) over the period."""

    group: dict[str, str] = field(default_factory=dict)
    runs: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    estimated_runs: int = 0
    """Runs some of whose tokens are an estimate."""
    unpriced_runs: int = 0
    """Runs of a model without a price (their cost is not in ``cost_usd``)."""

    def __add__(self, other: UsageLine) -> UsageLine:
        return UsageLine(
            runs=self.runs + other.runs,
            usage=self.usage + other.usage,
            cost_usd=self.cost_usd + other.cost_usd,
            estimated_runs=self.estimated_runs + other.estimated_runs,
            unpriced_runs=self.unpriced_runs + other.unpriced_runs,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.group,
            "runs": self.runs,
            **self.usage.counts(),
            "cost_usd": round(self.cost_usd, 6),
            "estimated_runs": self.estimated_runs,
            "unpriced_runs": self.unpriced_runs,
        }


def total(lines: Iterable[UsageLine]) -> UsageLine:
    """The sum of ``lines``, without groups."""
    summed = UsageLine()
    for line in lines:
        summed = summed + line
    return summed
