"""Titles cut from the first message, and the hook for a better one."""

from __future__ import annotations

import pytest

from agentstream.principal import Principal
from agentstream.store import SqlConversationStore, title_from_message

from .helpers import exchange


@pytest.mark.parametrize(
    ("message", "title"),
    [
        ("Check the system status", "Check the system status"),
        ("  lots\n\nof   \t space  ", "lots of space"),
        ("", "New conversation"),
        ("   \n ", "New conversation"),
        (
            "Please summarise every incident report from last week and group them by severity",
            "Please summarise every incident report from last week and…",
        ),
        ("x" * 100, "x" * 59 + "…"),
    ],
)
def test_title_from_message(message: str, title: str) -> None:
    assert title_from_message(message) == title
    assert len(title_from_message(message)) <= 60


async def test_a_generated_title_is_cleaned_and_never_replaces_the_users(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "how much disk is left on the db server", "plenty")
    assert (
        await store.set_generated_title(alice, cid, "  Disk space\n  check ") == "Disk space check"
    )
    assert (await store.get_conversation(alice, cid)).summary.title == "Disk space check"
    await store.rename_conversation(alice, cid, "Mine")
    assert await store.set_generated_title(alice, cid, "Other") is None
    assert (await store.get_conversation(alice, cid)).summary.title == "Mine"
