"""Where a client's own history branches the stored conversation (AG-UI, the data
playground): each case of :func:`~agentstream.server.dialects.branching.diverging`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentstream.conversation import DisplayMessage
from agentstream.runs import Branch
from agentstream.server.dialects.branching import diverging

NOW = datetime(2026, 11, 28, tzinfo=UTC)
SHOWN = tuple(
    DisplayMessage(id=id_, role=role, content=content, created_at=NOW)  # type: ignore[arg-type]
    for id_, role, content in (
        ("q1", "user", "Hi"),
        ("a1", "assistant", "Hello"),
        ("q2", "user", "Tell a jkoe"),
        ("a2", "assistant", "A what?"),
    )
)


@pytest.mark.parametrize(
    ("asked", "new", "branch"),
    [
        (["Hi", "Tell a jkoe"], "More", None),  # agrees: go on
        (["Hi", "Tell a jkoe", "Elsewhere"], "More", None),  # the store has less: go on
        (["Hi"], "Tell a joke", Branch(after="a1")),  # stops short: an edit of q2
        (["Hi"], "Tell a jkoe", Branch(after="q2", again=True)),  # the same question: again
        ([], "Hey", Branch(after=None)),  # an edit of the first question
        ([], "Hi", Branch(after="q1", again=True)),
        (["Hey", "Tell a jkoe"], "More", Branch(after=None)),  # differs at the first
        (["Hi", "Tell a joke"], "More", Branch(after="a1")),  # differs at the second
    ],
)
def test_where_a_client_history_branches(asked: list[str], new: str, branch: Branch | None) -> None:
    assert diverging(SHOWN, asked, new) == branch


def test_nothing_stored_is_nothing_to_branch() -> None:
    assert diverging((), ["Hi"], "More") is None
