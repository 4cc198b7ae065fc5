"""The ids the server makes begin with their creation time (UUID version 7)."""

from __future__ import annotations

import time
import uuid

from agentstream.ids import new_id, uuid7


def test_an_id_is_a_version_7_uuid_that_begins_with_its_creation_time() -> None:
    before = time.time_ns() // 1_000_000
    made = uuid7()
    after = time.time_ns() // 1_000_000
    assert made.version == 7
    assert made.variant == uuid.RFC_4122
    assert before <= made.int >> 80 <= after
    assert uuid.UUID(new_id()).version == 7


def test_ids_sort_in_the_order_they_were_made() -> None:
    made = []
    for _ in range(50):
        made.append(new_id())
        time.sleep(0.0002)  # sub-millisecond apart: the clock's fraction orders them
    assert sorted(made) == made
    assert len(set(made)) == len(made)


def test_ids_made_in_the_same_instant_differ() -> None:
    assert len({uuid7() for _ in range(10_000)}) == 10_000
