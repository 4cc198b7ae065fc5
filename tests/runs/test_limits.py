"""Limits per user and per tenant: configured from the environment, the configuration file and
code; counted in process and in Redis (two limiters standing for two workers)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from agentstream.errors import ConfigurationError, LimitExceeded
from agentstream.events import RunUsage, Usage
from agentstream.principal import Principal
from agentstream.runs.limits import Limits, LocalLimiter, Quota, TenantLimits
from agentstream.runs.redis_limits import RedisLimiter

REDIS = "redis://127.0.0.1:6379/0"


def caller(tenant: str | None = None) -> Principal:
    return Principal(user_id=f"u-{uuid.uuid4().hex[:8]}", tenant_id=tenant)


def spent(tokens: int, cost: float | None = None) -> RunUsage:
    return RunUsage(usage=Usage(input_tokens=tokens), cost_usd=cost)


# --- configuration ----------------------------------------------------------------------------


def test_each_users_limits_come_from_the_environment() -> None:
    limits = Limits.from_env(
        {
            "AGENTSTREAM_LIMIT_REQUESTS_PER_MINUTE": "30",
            "AGENTSTREAM_LIMIT_CONCURRENT_RUNS": " 2 ",
            "AGENTSTREAM_LIMIT_TOKENS_PER_DAY": "1_000_000",
        }
    )
    assert limits.user == Quota(requests_per_minute=30, concurrent_runs=2, tokens_per_day=1_000_000)
    assert not Limits.from_env({"AGENTSTREAM_LIMIT_TOKENS_PER_DAY": ""}).active
    with pytest.raises(ConfigurationError, match="AGENTSTREAM_LIMIT_CONCURRENT_RUNS"):
        Limits.from_env({"AGENTSTREAM_LIMIT_CONCURRENT_RUNS": "two"})


def test_tenants_and_their_overrides_come_from_the_configuration_file(tmp_path: Path) -> None:
    config = tmp_path / "agentstream.toml"
    config.write_text(
        """
[limits.user]
requests_per_minute = 20
[limits.tenant]
tokens_per_day = 2_000_000
cost_per_day = 50.0
[limits.tenants.acme.user]
tokens_per_day = 500_000
[limits.tenants.acme.tenant]
concurrent_runs = 40
""",
        encoding="utf-8",
    )
    limits = Limits().with_file(config)
    acme = limits.quotas(Principal(user_id="ann", tenant_id="acme"))
    assert acme == [
        ("user", "user:acme\x1fann", Quota(requests_per_minute=20, tokens_per_day=500_000)),
        (
            "tenant",
            "tenant:acme",
            Quota(concurrent_runs=40, tokens_per_day=2_000_000, cost_per_day=50.0),
        ),
    ]
    # Without a tenant, only the user's own limits apply.
    assert limits.quotas(Principal(user_id="bob")) == [
        ("user", "user:\x1fbob", Quota(requests_per_minute=20))
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[limits.user]\nrequests_per_minut = 3\n", "unknown key 'requests_per_minut'"),
        ("[limits.user]\nconcurrent_runs = -1\n", "limits.user.concurrent_runs"),
        ("[limits.user]\ntokens_per_day = 1.5\n", "limits.user.tokens_per_day"),
        ("[limits.tenants]\nacme = 3\n", "limits.tenants: expected one table per tenant"),
        ("[limits]\nuser = 3\n", "limits.user: expected a table"),
    ],
)
def test_a_mistake_in_the_file_names_the_key(tmp_path: Path, text: str, named: str) -> None:
    config = tmp_path / "agentstream.toml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=named) as caught:
        Limits().with_file(config)
    assert str(config) in str(caught.value)


# --- counting, in process and in Redis ----------------------------------------------------------


@pytest.fixture(params=["process", "redis"])
async def limiters(request: pytest.FixtureRequest) -> AsyncIterator[object]:
    """Two limiters standing for two workers: one and the same in process; two sharing Redis
    (under a key prefix of their own) otherwise."""
    made: list[LocalLimiter | RedisLimiter] = []
    prefix = f"test-{uuid.uuid4().hex}:"

    def make(limits: Limits, *, lease: float = 15.0) -> tuple[object, object]:
        if request.param == "process":
            one = LocalLimiter(limits)
            made.append(one)
            return one, one
        pair = (
            RedisLimiter(limits, REDIS, prefix=prefix, lease=lease),
            RedisLimiter(limits, REDIS, prefix=prefix, lease=lease),
        )
        made.extend(pair)
        return pair

    yield make
    for limiter in made:
        await limiter.aclose()
    if request.param == "redis":
        client = aioredis.Redis.from_url(REDIS)
        keys = [key async for key in client.scan_iter(f"{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_requests_per_minute_are_counted_across_workers(limiters: object) -> None:
    first, second = limiters(Limits(user=Quota(requests_per_minute=3)))  # type: ignore[operator]
    ann = caller()
    for limiter in (first, second, first):
        admission = await limiter.admit(ann, uuid.uuid4().hex)
        await limiter.settle(admission, spent(1))
    with pytest.raises(LimitExceeded) as caught:
        await second.admit(ann, uuid.uuid4().hex)
    assert caught.value.limit == "requests_per_minute"
    assert caught.value.scope == "user"
    assert 1 <= caught.value.retry_after <= 60
    assert "3 requests per minute (requests_per_minute)" in str(caught.value)
    assert await second.admit(caller(), uuid.uuid4().hex) is not None  # another user is not


async def test_runs_at_once_are_counted_until_they_end(limiters: object) -> None:
    first, second = limiters(Limits(user=Quota(concurrent_runs=2)))  # type: ignore[operator]
    ann = caller()
    one = await first.admit(ann, "run-1")
    await second.admit(ann, "run-2")
    with pytest.raises(LimitExceeded) as caught:
        await second.admit(ann, "run-3")
    assert caught.value.limit == "concurrent_runs"
    await first.settle(one, spent(5))
    assert await second.admit(ann, "run-3") is not None


async def test_a_daily_token_budget_spent_refuses_until_tomorrow(limiters: object) -> None:
    first, second = limiters(Limits(user=Quota(tokens_per_day=100)))  # type: ignore[operator]
    ann = caller()
    admission = await first.admit(ann, "a")
    assert [b.left for b in admission.budgets] == [100]
    await first.settle(admission, spent(60))
    admission = await second.admit(ann, "b")
    assert [b.left for b in admission.budgets] == [40]  # what the run may still spend
    await second.settle(admission, spent(45))
    with pytest.raises(LimitExceeded) as caught:
        await first.admit(ann, "c")
    assert caught.value.limit == "tokens_per_day"
    assert caught.value.retry_after <= 24 * 3600


async def test_a_tenants_limit_counts_all_its_users(limiters: object) -> None:
    limits = Limits(
        tenant=Quota(cost_per_day=1.0),
        tenants={"acme": TenantLimits(tenant=Quota(concurrent_runs=1))},
    )
    first, second = limiters(limits)  # type: ignore[operator]
    ann, bob = caller("acme"), caller("acme")
    running = await first.admit(ann, "r1")
    with pytest.raises(LimitExceeded) as caught:
        await second.admit(bob, "r2")
    assert (caught.value.limit, caught.value.scope) == ("concurrent_runs", "tenant")
    assert "your organization" in str(caught.value)
    await first.settle(running, spent(10, cost=1.25))
    with pytest.raises(LimitExceeded) as caught:
        await second.admit(bob, "r3")
    assert (caught.value.limit, caught.value.scope) == ("cost_per_day", "tenant")
    # Another tenant has its own.
    assert await second.admit(caller("globex"), "r4") is not None


async def test_the_runs_of_a_worker_that_died_stop_counting_within_a_lease() -> None:
    prefix = f"test-{uuid.uuid4().hex}:"
    limits = Limits(user=Quota(concurrent_runs=1))
    dead = RedisLimiter(limits, REDIS, prefix=prefix, lease=1.0)
    alive = RedisLimiter(limits, REDIS, prefix=prefix, lease=1.0)
    await alive.start()
    ann = caller()
    try:
        await dead.admit(ann, "orphan")  # its worker never renews nor settles it
        with pytest.raises(LimitExceeded):
            await alive.admit(ann, "next")
        await asyncio.sleep(1.2)
        running = await alive.admit(ann, "next")
        await asyncio.sleep(1.2)  # renewed meanwhile: still counted
        with pytest.raises(LimitExceeded):
            await dead.admit(ann, "third")
        await alive.settle(running, None)
    finally:
        await dead.aclose()
        await alive.aclose()


async def test_without_redis_each_worker_counts_its_own() -> None:
    limiter = RedisLimiter(Limits(user=Quota(requests_per_minute=1)), "redis://127.0.0.1:1/0")
    ann = caller()
    try:
        admission = await limiter.admit(ann, "a")
        assert admission is not None
        await limiter.settle(admission, spent(1))
        with pytest.raises(LimitExceeded):
            await limiter.admit(ann, "b")
    finally:
        await limiter.aclose()
