"""Limits per user and per tenant: requests per minute, runs at once, tokens and cost per day.

A deployment keeps one user, or one tenant, from spending everybody's model budget. Each
:class:`Quota` holds the four limits of one scope; :class:`Limits` holds the quota of every
user, the quota of every tenant (all its users together) and per-tenant overrides of both.
The defaults of each user's quota come from the environment (``AGENTSTREAM_LIMIT_*``), the
rest from the ``[limits]`` table of the configuration file or from code::

    [limits.user]                # each user (the environment's values win)
    requests_per_minute = 20
    [limits.tenant]              # each tenant, all its users together
    tokens_per_day = 2_000_000
    cost_per_day = 50.0          # US dollars
    [limits.tenants.acme.user]   # the users of tenant "acme"
    tokens_per_day = 500_000
    [limits.tenants.acme.tenant] # tenant "acme" as a whole
    concurrent_runs = 40

A :class:`Limiter` enforces them as runs start (:meth:`Limiter.admit`, a
:class:`~agentstream.errors.LimitExceeded` before anything is stored or streamed: a 429 in
every protocol) and counts what each run used and cost when it ends (:meth:`Limiter.settle`).
:class:`LocalLimiter` counts in this process; :class:`~agentstream.runs.redis_limits.RedisLimiter`
counts in Redis, for every worker at once. Only run starts count as requests (reading a
conversation, following or stopping a run do not).

A run's tokens are counted when it ends, so a run already going does not see another's: the
token and cost budgets are checked as each run starts, and while it streams against what the
day had used when it started (:class:`BudgetWatch`): a run that crosses the budget mid-answer
is stopped with a ``run_failed`` naming the limit, its partial answer kept. Days are UTC days.
"""

from __future__ import annotations

import math
import time
import tomllib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentstream.agent.usage import CHARS_PER_TOKEN
from agentstream.errors import ConfigurationError, LimitExceeded
from agentstream.events import (
    ReasoningDelta,
    RunEvent,
    RunUsage,
    TextDelta,
    ToolCallDelta,
    UsageEvent,
)
from agentstream.principal import Principal
from agentstream.providers.profiles import MILLION, Prices

if TYPE_CHECKING:
    from agentstream.runs.session import RunSession

__all__ = [
    "LIMIT_EXCEEDED",
    "Admission",
    "BudgetWatch",
    "LimitExceeded",
    "Limiter",
    "Limits",
    "LocalLimiter",
    "Quota",
    "Scope",
    "TenantLimits",
    "limit_message",
    "seconds_to_midnight",
    "today",
]

LIMIT_EXCEEDED = "limit_exceeded"
"""The ``kind`` of the ``run_failed`` of a run stopped mid-answer by its budget."""

Scope = Literal["user", "tenant"]
LimitName = Literal["requests_per_minute", "concurrent_runs", "tokens_per_day", "cost_per_day"]

CONCURRENT_RETRY_SECONDS = 5
"""What a caller over its runs at once is told to wait: one of its runs may end any time."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Quota:
    """The limits of one scope (a user, or a tenant's users together); ``None`` is no limit."""

    requests_per_minute: int | None = None
    concurrent_runs: int | None = None
    tokens_per_day: int | None = None
    cost_per_day: float | None = None
    """US dollars a day, from the model catalog's prices
    (:mod:`agentstream.providers.profiles`); runs of a model without a price cost nothing."""

    @property
    def active(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))

    def over(self, given: Quota) -> Quota:
        """This quota with the limits ``given`` sets replacing its own."""
        changes = {f.name: v for f in fields(given) if (v := getattr(given, f.name)) is not None}
        return replace(self, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class TenantLimits:
    """One tenant's overrides: of each of its users' quota, and of its own."""

    user: Quota = field(default_factory=Quota)
    tenant: Quota = field(default_factory=Quota)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Every limit of a deployment (see :mod:`agentstream.runs.limits`)."""

    user: Quota = field(default_factory=Quota)
    """Each user's."""
    tenant: Quota = field(default_factory=Quota)
    """Each tenant's, all its users together (callers without a tenant have none)."""
    tenants: Mapping[str, TenantLimits] = field(default_factory=dict)
    """Overrides by tenant id."""

    @property
    def active(self) -> bool:
        """Whether any limit is set at all (no limiter is needed otherwise)."""
        return (
            self.user.active
            or self.tenant.active
            or any(t.user.active or t.tenant.active for t in self.tenants.values())
        )

    def quotas(self, principal: Principal) -> list[tuple[Scope, str, Quota]]:
        """The scopes ``principal``'s runs count against, with their keys and quotas."""
        override = self.tenants.get(principal.tenant, TenantLimits())
        found: list[tuple[Scope, str, Quota]] = []
        user = self.user.over(override.user)
        if user.active:
            found.append(("user", f"user:{principal.owner}", user))
        if principal.tenant_id:
            tenant = self.tenant.over(override.tenant)
            if tenant.active:
                found.append(("tenant", f"tenant:{principal.tenant}", tenant))
        return found

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        """Each user's quota from ``AGENTSTREAM_LIMIT_REQUESTS_PER_MINUTE``,
        ``AGENTSTREAM_LIMIT_CONCURRENT_RUNS`` and ``AGENTSTREAM_LIMIT_TOKENS_PER_DAY``
        (unset or empty: no limit)."""
        values: dict[str, Any] = {}
        for name in ("requests_per_minute", "concurrent_runs", "tokens_per_day"):
            variable = f"AGENTSTREAM_LIMIT_{name.upper()}"
            raw = (env.get(variable) or "").strip()
            if raw:
                values[name] = _limit(raw.replace("_", ""), variable, integer=True)
        return cls(user=Quota(**values))

    def with_file(self, path: str | Path | None) -> Limits:
        """These limits under the ``[limits]`` table of the TOML file at ``path``: the file's
        values replace these (an environment's values are applied after, by whoever read
        both). A mistake is a :class:`~agentstream.errors.ConfigurationError` naming the
        file and the key."""
        if path is None:
            return self
        try:
            with open(path, "rb") as file:
                table = tomllib.load(file).get("limits")
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigurationError(f"configuration file {str(path)!r}: {exc}") from None
        if table is None:
            return self
        try:
            return _from_table(self, table)
        except ConfigurationError as exc:
            raise ConfigurationError(f"configuration file {str(path)!r}: {exc}") from None


def _from_table(base: Limits, table: Any) -> Limits:
    where = "limits"
    _expect_table(table, where, {"user", "tenant", "tenants"})
    tenants: dict[str, TenantLimits] = dict(base.tenants)
    given = table.get("tenants", {})
    _expect_table(given, f"{where}.tenants", None)
    for name, entry in given.items():
        place = f"{where}.tenants.{name}"
        _expect_table(entry, place, {"user", "tenant"})
        tenants[name] = TenantLimits(
            user=_quota(entry.get("user", {}), f"{place}.user"),
            tenant=_quota(entry.get("tenant", {}), f"{place}.tenant"),
        )
    return Limits(
        user=base.user.over(_quota(table.get("user", {}), f"{where}.user")),
        tenant=base.tenant.over(_quota(table.get("tenant", {}), f"{where}.tenant")),
        tenants=tenants,
    )


_QUOTA_FIELDS = {f.name for f in fields(Quota)}


def _expect_table(value: Any, where: str, keys: set[str] | None) -> None:
    if not isinstance(value, dict):
        raise ConfigurationError(f"{where}: expected a table")
    if keys is not None and set(value) - keys:
        unknown = sorted(set(value) - keys)[0]
        raise ConfigurationError(
            f"{where}: unknown key {unknown!r} (expected {', '.join(sorted(keys))})"
        )
    if keys is None and not all(isinstance(v, dict) for v in value.values()):
        raise ConfigurationError(f"{where}: expected one table per tenant")


def _quota(table: Any, where: str) -> Quota:
    _expect_table(table, where, _QUOTA_FIELDS)
    return Quota(
        **{
            name: _limit(value, f"{where}.{name}", integer=name != "cost_per_day")
            for name, value in table.items()
        }
    )


def _limit(value: Any, where: str, *, integer: bool) -> Any:
    try:
        number = int(value) if integer else float(value)
    except (TypeError, ValueError):
        number = -1
    if (
        isinstance(value, bool)
        or number < 0
        or (integer and isinstance(value, float))
        or not math.isfinite(number)
    ):
        kind = "a whole number" if integer else "a number"
        raise ConfigurationError(f"{where}: expected {kind} of 0 or more, not {value!r}")
    return number


# --- enforcing them -----------------------------------------------------------------------


def seconds_to_midnight(now: float | None = None) -> int:
    """Seconds until the next UTC day, when daily budgets start again."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    midnight = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, math.ceil((midnight - moment).total_seconds()))


def today(now: float | None = None) -> str:
    """The UTC day (``YYYY-MM-DD``) daily budgets count against."""
    return datetime.fromtimestamp(time.time() if now is None else now, UTC).strftime("%Y-%m-%d")


_WORDS: dict[str, str] = {
    "requests_per_minute": "requests per minute",
    "concurrent_runs": "answers at once",
    "tokens_per_day": "tokens a day",
    "cost_per_day": "US dollars a day",
}


def limit_message(scope: Scope, limit: str, value: float) -> str:
    """Which limit was reached, in words a user reads (and its name, for an operator)."""
    whose = "your account" if scope == "user" else "your organization"
    amount = f"{value:,.2f}" if limit == "cost_per_day" else f"{int(value):,}"
    return f"Limit reached: {whose} may use {amount} {_WORDS[limit]} ({limit})."


def refusal(scope: Scope, limit: str, value: float, retry_after: int) -> LimitExceeded:
    """The 429 for ``scope`` over ``limit``."""
    return LimitExceeded(
        f"{limit_message(scope, limit, value)} Try again in {retry_after} s.",
        limit=limit,
        scope=scope,
        retry_after=retry_after,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """What is left of a daily budget when a run starts: the run may spend up to it."""

    scope: Scope
    limit: Literal["tokens_per_day", "cost_per_day"]
    value: float
    """The limit itself."""
    left: float
    """Tokens (or US dollars) the day had left when the run started."""


@dataclass(slots=True, kw_only=True)
class Admission:
    """A run let in: the scopes it counts against (and their keys) and the tightest daily
    budgets it may spend. Settled once (:meth:`Limiter.settle`) when the run ends."""

    run_id: str
    principal: Principal
    scopes: list[tuple[Scope, str, Quota]]
    budgets: list[Budget] = field(default_factory=list)
    settled: bool = False

    def watch(self, session: RunSession) -> BudgetWatch | None:
        """What stops the run mid-answer when it crosses a daily budget (none without one)."""
        if not self.budgets:
            return None
        return BudgetWatch(session, self.budgets)


class Limiter(Protocol):
    """Enforces :class:`Limits` (see :mod:`agentstream.runs.limits`)."""

    limits: Limits

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def admit(self, principal: Principal, run_id: str) -> Admission | None:
        """Let run ``run_id`` of ``principal`` start, counting it (a request, a run going),
        or raise :class:`~agentstream.errors.LimitExceeded`. ``None``: no limit applies to
        this caller."""
        ...

    async def settle(self, admission: Admission, usage: RunUsage | None) -> None:
        """The run has ended (or never started: ``usage`` is ``None``): it no longer runs,
        and what it used and cost counts against its daily budgets."""
        ...


def budgets(scopes: list[tuple[Scope, str, Quota]], used: list[tuple[int, float]]) -> list[Budget]:
    """The daily budgets of ``scopes`` given what each ``used`` today (tokens, cost)."""
    found: list[Budget] = []
    for (scope, _, quota), (tokens, cost) in zip(scopes, used, strict=True):
        daily: tuple[tuple[Literal["tokens_per_day", "cost_per_day"], float | None, float], ...]
        daily = (
            ("tokens_per_day", quota.tokens_per_day, tokens),
            ("cost_per_day", quota.cost_per_day, cost),
        )
        for limit, value, spent in daily:
            if value is not None:
                found.append(Budget(scope=scope, limit=limit, value=value, left=value - spent))
    return found


def over_budget(found: list[Budget]) -> LimitExceeded | None:
    """The refusal for the first budget already spent, if any."""
    for budget in found:
        if budget.left <= 0:
            return refusal(budget.scope, budget.limit, budget.value, seconds_to_midnight())
    return None


class LocalLimiter:
    """:class:`Limits` counted in this process: for one worker (with several, each would
    count only its own: use :class:`~agentstream.runs.redis_limits.RedisLimiter`)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._requests: dict[str, deque[float]] = {}
        self._running: dict[str, set[str]] = {}
        self._spent: dict[tuple[str, str], tuple[int, float]] = {}
        """(key, day) -> tokens and US dollars counted that day."""

    async def start(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    async def admit(self, principal: Principal, run_id: str) -> Admission | None:
        scopes = self.limits.quotas(principal)
        if not scopes:
            return None
        now, day = time.monotonic(), today()
        for scope, key, quota in scopes:
            self._check(scope, key, quota, now)
        found = budgets(scopes, [self._spent.get((key, day), (0, 0.0)) for _, key, _ in scopes])
        refused = over_budget(found)
        if refused is not None:
            raise refused
        for _, key, _ in scopes:
            self._requests.setdefault(key, deque()).append(now)
            self._running.setdefault(key, set()).add(run_id)
        return Admission(run_id=run_id, principal=principal, scopes=scopes, budgets=found)

    def _check(self, scope: Scope, key: str, quota: Quota, now: float) -> None:
        running = len(self._running.get(key, ()))
        if quota.concurrent_runs is not None and running >= quota.concurrent_runs:
            raise refusal(scope, "concurrent_runs", quota.concurrent_runs, CONCURRENT_RETRY_SECONDS)
        if quota.requests_per_minute is not None:
            window = self._requests.get(key)
            while window and window[0] <= now - 60:
                window.popleft()
            if window is not None and len(window) >= quota.requests_per_minute:
                wait = math.ceil(window[0] + 60 - now) if window else 60
                raise refusal(scope, "requests_per_minute", quota.requests_per_minute, wait)

    async def settle(self, admission: Admission, usage: RunUsage | None) -> None:
        if admission.settled:
            return
        admission.settled = True
        day = today()
        for _, key, _ in admission.scopes:
            running = self._running.get(key)
            if running is not None:
                running.discard(admission.run_id)
                if not running:
                    del self._running[key]
            if usage is not None:
                tokens, cost = self._spent.get((key, day), (0, 0.0))
                self._spent[(key, day)] = (
                    tokens + usage.usage.total_tokens,
                    cost + (usage.cost_usd or 0.0),
                )
        # Yesterday's counts are of no use any more.
        for stale in [k for k in self._spent if k[1] != day]:
            del self._spent[stale]


class BudgetWatch:
    """Stops a run that crosses a daily budget mid-answer (see
    :mod:`agentstream.runs.limits`): the model calls it finished count as billed, the one
    streaming as the characters it has written (estimated as tokens, and priced at the
    model's output rate)."""

    __slots__ = ("_allowed", "_budgets", "_prices", "_session", "_written")

    deltas = True  # what the model writes is what it spends

    def __init__(self, session: RunSession, found: list[Budget]) -> None:
        self._session = session
        self._budgets = found
        self._prices: Prices | None = session.prices
        self._written = 0
        """Characters the model call in progress has written."""
        self._allowed = self._characters_left()

    def _spent(self, budget: Budget) -> float:
        usage = self._session.run.usage.usage
        if budget.limit == "tokens_per_day":
            return usage.total_tokens
        return 0.0 if self._prices is None else self._prices.cost(usage)

    def _characters(self, budget: Budget) -> float:
        """How many characters the run may still write within ``budget``."""
        left = budget.left - self._spent(budget)
        if budget.limit == "tokens_per_day":
            return left * CHARS_PER_TOKEN
        prices = self._prices
        if prices is None or prices.output <= 0:
            return math.inf
        return left / prices.output * MILLION * CHARS_PER_TOKEN

    def _characters_left(self) -> float:
        return min(self._characters(budget) for budget in self._budgets)

    def event(self, event: RunEvent) -> None:
        kind = type(event)
        if kind is TextDelta or kind is ReasoningDelta:
            self._written += len(event.text)  # type: ignore[union-attr]
        elif kind is ToolCallDelta:
            self._written += len(event.delta)  # type: ignore[union-attr]
        elif kind is UsageEvent:  # a model call ended: it counts as billed from now on
            self._written = 0
            self._allowed = self._characters_left()
        else:
            return
        if self._written >= self._allowed:
            self._stop()

    def _stop(self) -> None:
        budget = min(self._budgets, key=self._characters)
        message = limit_message(budget.scope, budget.limit, budget.value)
        self._session.run.fail(LIMIT_EXCEEDED, f"{message} The answer was stopped there.")
        self._allowed = math.inf  # once

    def ended(self, session: RunSession) -> None:
        pass
