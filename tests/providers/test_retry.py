"""The retry policy's backoff schedule (the retry behaviour itself runs against every vendor's
fake in test_sdk.py)."""

from __future__ import annotations

import pytest

from agentstream.providers._retry import RetryPolicy


@pytest.mark.parametrize(("retry", "ceiling"), [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (20, 8.0)])
def test_backoff_grows_with_jitter_below_the_cap(retry: int, ceiling: float) -> None:
    policy = RetryPolicy()
    delays = [policy.delay(retry) for _ in range(200)]
    assert all(ceiling * (1 - policy.jitter) <= d <= ceiling for d in delays)
    assert len(set(delays)) > 1  # jittered, so clients that failed together spread out


def test_no_jitter_is_exact() -> None:
    assert RetryPolicy(jitter=0, initial_delay=1, multiplier=3).delay(3) == 8.0
