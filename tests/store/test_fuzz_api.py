"""A schema-driven fuzz over the OpenAPI document: no input makes the server fail.

Schemathesis generates requests for every operation the server documents (bodies, paths,
queries and headers, valid and not) and sends them to the real app on uvicorn with the store
on, SQLite and PostgreSQL. Any 5xx fails the test. Bounded: a fixed number of examples per
operation and no shrinking deadline, so it takes seconds, not minutes.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings

from .test_e2e_server import live_server

EXAMPLES_PER_OPERATION = 60


def test_no_input_is_a_server_error(database_url: str) -> None:
    failures: list[str] = []
    with live_server(database_url) as server:
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
        for result in schema.get_all_operations():
            operation = result.ok()

            @given(case=operation.as_strategy())
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case: schemathesis.Case) -> None:
                response = case.call(timeout=30)
                if response.status_code >= 500:
                    failures.append(
                        f"{case.method} {case.formatted_path} -> {response.status_code}: "
                        f"{response.text[:200]}"
                    )

            check()
    assert failures == []
