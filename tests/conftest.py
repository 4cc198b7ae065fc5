"""Fixtures shared by every test package."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.attachments.s3 import s3_server


@pytest.fixture
def no_leftover_tasks() -> object:
    """Asserts, after the test body, that the test left no task running but its own."""

    class Checker:
        def assert_clean(self) -> None:
            current = asyncio.current_task()
            others = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
            assert others == [], f"tasks left behind: {others}"

    return Checker()


@pytest.fixture(scope="session")
def s3_url() -> Iterator[str]:
    """A real S3-compatible server for this test session (started when first asked for)."""
    with s3_server() as url:
        yield url
