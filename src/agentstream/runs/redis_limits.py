"""Limits counted in Redis, so that every worker enforces the same ones
(see :mod:`agentstream.runs.limits`).

One script checks every limit of a run's scopes and, when all allow it, counts the run, in
one round trip and atomically: two workers letting in a user's last request of the minute at
the same moment cannot both succeed. Per scope (``{prefix}limits:{scope key}``):

* ``:requests``, a sorted set of the last minute's run starts (a sliding window);
* ``:running``, a sorted set of the runs going, each scored with when it lapses: a worker
  renews its runs (as the broker renews its leases), so the runs of a worker that died stop
  counting within a lease, rather than blocking their user for good;
* ``:tokens:{day}`` and ``:cost:{day}``, what the UTC day's runs used and cost, kept two days.

While Redis cannot be reached, each worker counts in its own process (an outage is logged
once, and once when Redis is back), so limits still hold, per worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

import redis.asyncio as aioredis

from agentstream.events import RunUsage
from agentstream.principal import Principal
from agentstream.runs.limits import (
    CONCURRENT_RETRY_SECONDS,
    Admission,
    Limits,
    LocalLimiter,
    budgets,
    refusal,
    seconds_to_midnight,
    today,
)

__all__ = ["RedisLimiter"]

log = logging.getLogger("agentstream.limits")

DAY_KEYS_SECONDS = 2 * 24 * 3600
"""How long a day's counts are kept (a day ends at a different moment in each time zone)."""

_ADMIT = """
local now = tonumber(ARGV[1])
local scopes = tonumber(ARGV[4])
local used = {}
for i = 0, scopes - 1 do
  local requests, running = KEYS[i * 4 + 1], KEYS[i * 4 + 2]
  local rpm, concurrent = tonumber(ARGV[5 + i * 4]), tonumber(ARGV[6 + i * 4])
  local tokens_limit, cost_limit = tonumber(ARGV[7 + i * 4]), tonumber(ARGV[8 + i * 4])
  redis.call('ZREMRANGEBYSCORE', running, '-inf', now)
  if concurrent >= 0 and redis.call('ZCARD', running) >= concurrent then
    return {1, i, 'concurrent_runs', 0}
  end
  redis.call('ZREMRANGEBYSCORE', requests, '-inf', now - 60000)
  if rpm >= 0 and redis.call('ZCARD', requests) >= rpm then
    local oldest = redis.call('ZRANGE', requests, 0, 0, 'WITHSCORES')
    return {1, i, 'requests_per_minute', tonumber(oldest[2]) + 60000 - now}
  end
  local tokens = tonumber(redis.call('GET', KEYS[i * 4 + 3]) or '0')
  local cost = redis.call('GET', KEYS[i * 4 + 4]) or '0'
  if tokens_limit >= 0 and tokens >= tokens_limit then
    return {1, i, 'tokens_per_day', 0}
  end
  if cost_limit >= 0 and tonumber(cost) >= cost_limit then
    return {1, i, 'cost_per_day', 0}
  end
  used[#used + 1] = tostring(tokens)
  used[#used + 1] = cost
end
for i = 0, scopes - 1 do
  local requests, running = KEYS[i * 4 + 1], KEYS[i * 4 + 2]
  redis.call('ZADD', requests, now, ARGV[3])
  redis.call('PEXPIRE', requests, 61000)
  redis.call('ZADD', running, tonumber(ARGV[5 + scopes * 4]), ARGV[2])
  redis.call('PEXPIRE', running, tonumber(ARGV[6 + scopes * 4]))
end
return {0, used}
"""


class RedisLimiter:
    """:class:`~agentstream.runs.limits.Limits` counted in Redis for every worker (see
    :mod:`agentstream.runs.redis_limits`); ``lease`` is how long a run counts as going
    without its worker renewing it."""

    def __init__(
        self,
        limits: Limits,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "agentstream:",
        lease: float = 15.0,
    ) -> None:
        self.limits = limits
        self._redis: aioredis.Redis = aioredis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5
        )
        self._prefix = prefix
        self._lease = lease
        self._local = LocalLimiter(limits)
        self._script = self._redis.register_script(_ADMIT)
        self._mine: dict[str, Admission] = {}
        """Runs this worker let in through Redis that have not ended: renewed."""
        self._renewing: asyncio.Task[None] | None = None
        self._down = False

    def _key(self, key: str) -> str:
        return f"{self._prefix}limits:{key}"

    async def start(self) -> None:
        self._renewing = asyncio.create_task(self._renew())

    async def aclose(self) -> None:
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
        await self._redis.aclose()

    def _unavailable(self, exc: BaseException) -> None:
        if not self._down:
            self._down = True
            log.warning("Redis is unavailable (%s): limits are counted per worker", exc)

    def _available(self) -> None:
        if self._down:
            self._down = False
            log.warning("Redis is back: limits are counted for all workers again")

    async def admit(self, principal: Principal, run_id: str) -> Admission | None:
        scopes = self.limits.quotas(principal)
        if not scopes:
            return None
        now = int(time.time() * 1000)
        day = today()
        keys: list[str] = []
        args: list[Any] = [now, run_id, uuid.uuid4().hex, len(scopes)]
        for _, key, quota in scopes:
            base = self._key(key)
            keys += [f"{base}:requests", f"{base}:running", f"{base}:tokens:{day}"]
            keys.append(f"{base}:cost:{day}")
            args += [
                _or_none(quota.requests_per_minute),
                _or_none(quota.concurrent_runs),
                _or_none(quota.tokens_per_day),
                _or_none(quota.cost_per_day),
            ]
        args += [now + int(self._lease * 1000), int(self._lease * 2000)]
        try:
            answer = await self._script(keys=keys, args=args)
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            return await self._local.admit(principal, run_id)
        self._available()
        if int(answer[0]) == 1:
            scope, _, quota = scopes[int(answer[1])]
            limit = _text(answer[2])
            if limit == "concurrent_runs":
                raise refusal(scope, limit, quota.concurrent_runs or 0, CONCURRENT_RETRY_SECONDS)
            if limit == "requests_per_minute":
                wait = max(1, -(-int(answer[3]) // 1000))
                raise refusal(scope, limit, quota.requests_per_minute or 0, wait)
            budget = quota.tokens_per_day if limit == "tokens_per_day" else quota.cost_per_day
            raise refusal(scope, limit, budget or 0, seconds_to_midnight())
        counts = [_text(value) for value in answer[1]]
        used = [(int(float(counts[i])), float(counts[i + 1])) for i in range(0, len(counts), 2)]
        admission = Admission(
            run_id=run_id, principal=principal, scopes=scopes, budgets=budgets(scopes, used)
        )
        self._mine[run_id] = admission
        return admission

    async def settle(self, admission: Admission, usage: RunUsage | None) -> None:
        if admission.settled:
            return
        if self._mine.pop(admission.run_id, None) is None:
            await self._local.settle(admission, usage)  # let in while Redis was down
            return
        admission.settled = True
        day = today()
        pipe = self._redis.pipeline(transaction=False)
        for _, key, _ in admission.scopes:
            base = self._key(key)
            pipe.zrem(f"{base}:running", admission.run_id)
            if usage is not None:
                pipe.incrby(f"{base}:tokens:{day}", usage.usage.total_tokens)
                pipe.expire(f"{base}:tokens:{day}", DAY_KEYS_SECONDS)
                if usage.cost_usd:
                    pipe.incrbyfloat(f"{base}:cost:{day}", usage.cost_usd)
                    pipe.expire(f"{base}:cost:{day}", DAY_KEYS_SECONDS)
        try:
            await pipe.execute()
            self._available()
        except (aioredis.RedisError, OSError) as exc:
            # The run's slot lapses with its lease; its tokens are not counted.
            self._unavailable(exc)

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self._lease / 3)
            if not self._mine:
                continue
            lapses = int(time.time() * 1000 + self._lease * 1000)
            pipe = self._redis.pipeline(transaction=False)
            for admission in self._mine.values():
                for _, key, _ in admission.scopes:
                    running = f"{self._key(key)}:running"
                    pipe.zadd(running, {admission.run_id: lapses}, xx=True)
                    pipe.pexpire(running, int(self._lease * 2000))
            try:
                await pipe.execute()
                self._available()
            except (aioredis.RedisError, OSError) as exc:
                self._unavailable(exc)


def _or_none(limit: float | None) -> float:
    """A limit as the script takes it: -1 for none."""
    return -1 if limit is None else limit


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
