"""Limits hold across workers: two server processes sharing Redis count one user's requests
and runs together, whichever of them answers."""

from __future__ import annotations

import os
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

import httpx

from tests.server.helpers import SECRET, WAIT, bearer, serve_process, token

ROOT = Path(__file__).resolve().parents[2]


def test_a_users_limits_are_counted_across_two_workers() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env.update(
        AGENTSTREAM_REDIS_URL="redis://127.0.0.1:6379/0",
        AGENTSTREAM_REDIS_PREFIX=f"agentstream-test:{uuid.uuid4().hex}:",
        AGENTSTREAM_JWT_SECRET=SECRET,
        AGENTSTREAM_LIMIT_REQUESTS_PER_MINUTE="3",
        AGENTSTREAM_LIMIT_CONCURRENT_RUNS="1",
    )
    headers = bearer(token(f"user-{uuid.uuid4().hex[:8]}"))
    with ExitStack() as stack:
        first, second = (
            stack.enter_context(
                serve_process("tests.telemetry.agents:tools", "--no-store", cwd=ROOT, env=env)
            )
            for _ in range(2)
        )
        with httpx.Client(timeout=30, headers=headers) as client:
            with client.stream(
                "POST", f"{first}/api/chat/stream", json={"message": "slow", "detach": True}
            ) as started:
                assert started.status_code == 200
                run_id = started.headers["x-run-id"]
                next(started.iter_lines())

            # Its run goes on in the first worker: the second refuses another at once.
            refused = client.post(f"{second}/api/chat/stream", json={"message": "hi"})
            assert refused.status_code == 429
            assert refused.json()["limit"] == "concurrent_runs"
            assert client.post(f"{second}/api/chat/runs/{run_id}/cancel").status_code == 202

            def answer(base: str) -> httpx.Response:
                return client.post(f"{base}/api/chat/stream", json={"message": "hi"})

            deadline = time.monotonic() + WAIT  # a hang guard: the run ends at once
            while (response := answer(second)).status_code == 429:  # until the run has ended
                assert response.json()["limit"] == "concurrent_runs"
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert response.status_code == 200
            assert answer(first).status_code == 200  # the third request of the minute
            refused = answer(second)
            assert refused.status_code == 429
            assert refused.json()["limit"] == "requests_per_minute"
            assert answer(first).status_code == 429

            other = bearer(token(f"user-{uuid.uuid4().hex[:8]}"))
            fine = client.post(f"{first}/api/chat/stream", json={"message": "hi"}, headers=other)
            assert fine.status_code == 200
