"""Titles cut from the first message, and the hook for a better one."""

from __future__ import annotations

import pytest

from agentstream.principal import Principal
from agentstream.store import SqlConversationStore, retitle, title_from_message

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


async def test_retitle_uses_the_generator_unless_the_user_renamed(
    store: SqlConversationStore, alice: Principal
) -> None:
    asked: list[str] = []

    async def generate(first_message: str) -> str | None:
        asked.append(first_message)
        return "  Disk space   check "

    cid = await exchange(store, alice, "how much disk is left on the db server", "plenty")
    assert await retitle(store, alice, cid, "how much disk is left", generate) == "Disk space check"
    assert asked == ["how much disk is left"]
    assert (await store.get_conversation(alice, cid)).summary.title == "Disk space check"

    await store.rename_conversation(alice, cid, "Mine")
    assert await retitle(store, alice, cid, "x", generate) is None
    assert (await store.get_conversation(alice, cid)).summary.title == "Mine"

    async def nothing(first_message: str) -> str | None:
        return None

    assert await retitle(store, alice, cid, "x", nothing) is None
