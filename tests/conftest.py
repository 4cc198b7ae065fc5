"""Fixtures shared by every test package."""

from __future__ import annotations

import asyncio

import pytest


@pytest.fixture
def no_leftover_tasks() -> object:
    """Asserts, after the test body, that the test left no task running but its own."""

    class Checker:
        def assert_clean(self) -> None:
            current = asyncio.current_task()
            others = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
            assert others == [], f"tasks left behind: {others}"

    return Checker()
