"""Conversations written the way versions before conversations were trees wrote them
(revisions 0001 to 0003): raw rows, each message in ``(ordinal, seq)`` order, for the
migration tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from agentstream.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.principal import Principal
from agentstream.store.history import dump_message

AT = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
ANN = Principal(user_id="ann", tenant_id="acme")
BOB = Principal(user_id="bob", tenant_id="acme")

CONVERSATIONS = sa.table(
    "agentstream_conversations",
    *(sa.column(name) for name in ("id", "tenant_id", "owner_id", "title", "title_source")),
    sa.column("model"),
    sa.column("metadata", sa.JSON),
    *(sa.column(name) for name in ("created_at", "updated_at", "next_seq", "next_ordinal")),
)
RUNS = sa.table(
    "agentstream_runs",
    *(sa.column(name) for name in ("id", "conversation_id", "ordinal", "status", "model")),
    sa.column("error"),
    sa.column("usage", sa.JSON),
    sa.column("answer"),
    sa.column("result", sa.JSON),
    sa.column("started_at"),
    sa.column("finished_at"),
)
MESSAGES = sa.table(
    "agentstream_messages",
    *(sa.column(name) for name in ("id", "conversation_id", "run_id", "ordinal", "seq")),
    *(sa.column(name) for name in ("role", "text", "reasoning")),
    sa.column("body", sa.JSON),
    sa.column("status"),
    sa.column("created_at"),
)

CALL = ToolCall(id="r1", name="refund", arguments={"order": "A7"})
# Conversation c1 as that version stored it: an exchange; a question whose answer waited for
# an approval, continued by a run with no user message; an exchange whose answer was asked
# for again (the first answer's run was deleted, so ordinal 3 is missing); a run cut off.
C1_RUNS: list[tuple[str, int, str, list[Message]]] = [
    ("r0", 0, "completed", [UserMessage(content="Hi"), AssistantMessage(text="Hello!")]),
    (
        "r1",
        1,
        "completed",
        [UserMessage(content="Refund A7"), AssistantMessage(text="", tool_calls=(CALL,))],
    ),
    (
        "r2",
        2,
        "completed",
        [
            ToolResultsMessage(
                results=(ToolResultPart(tool_call_id="r1", name="refund", content="{}"),)
            ),
            AssistantMessage(text="Refunded."),
        ],
    ),
    ("r4", 4, "completed", [UserMessage(content="A joke"), AssistantMessage(text="A good one")]),
    ("r5", 5, "cancelled", [UserMessage(content="A story"), AssistantMessage(text="Once")]),
]


def stamp(seq: int) -> datetime:
    return AT + timedelta(seconds=seq)


async def write_as_before(engine: Any) -> None:
    async with engine.begin() as conn:
        seq = 0
        await conn.execute(sa.insert(CONVERSATIONS), [conversation("c1", ANN, 5, 6)])
        for rid, ordinal, status, messages in C1_RUNS:
            await conn.execute(sa.insert(RUNS), [run(rid, "c1", ordinal, status, messages)])
            rows = []
            for message in messages:
                rows.append(message_row(f"m{seq}", "c1", rid, ordinal, seq, message))
                seq += 1
            await conn.execute(sa.insert(MESSAGES), rows)
        # Bob's conversation: one question whose run failed before answering.
        await conn.execute(sa.insert(CONVERSATIONS), [conversation("c2", BOB, 1, 1)])
        await conn.execute(sa.insert(RUNS), [run("b0", "c2", 0, "failed", [])])
        question = UserMessage(content="Anyone?")
        await conn.execute(sa.insert(MESSAGES), [message_row("b-m0", "c2", "b0", 0, 0, question)])


def conversation(cid: str, owner: Principal, next_seq: int, next_ordinal: int) -> dict[str, Any]:
    return {
        "id": cid,
        "tenant_id": owner.tenant,
        "owner_id": owner.user_id,
        "title": "Hi",
        "title_source": "message",
        "model": "openai:gpt-4.1",
        "metadata": {"k": "v"},
        "created_at": AT.replace(tzinfo=None),
        "updated_at": AT.replace(tzinfo=None),
        "next_seq": next_seq + 10,
        "next_ordinal": next_ordinal,
    }


def run(rid: str, cid: str, ordinal: int, status: str, messages: list[Message]) -> dict[str, Any]:
    answer = next((m.text for m in messages if isinstance(m, AssistantMessage) and m.text), None)
    return {
        "id": rid,
        "conversation_id": cid,
        "ordinal": ordinal,
        "status": status,
        "model": "openai:gpt-4.1",
        "error": "boom" if status == "failed" else None,
        "usage": None,
        "answer": answer if status == "completed" else None,
        "result": {"message": answer, "payloads": []} if status == "completed" else None,
        "started_at": stamp(ordinal).replace(tzinfo=None),
        "finished_at": stamp(ordinal).replace(tzinfo=None),
    }


def message_row(
    mid: str, cid: str, rid: str, ordinal: int, seq: int, message: Message
) -> dict[str, Any]:
    role, text, reasoning, body = dump_message(message)
    return {
        "id": mid,
        "conversation_id": cid,
        "run_id": rid,
        "ordinal": ordinal,
        "seq": seq,
        "role": role,
        "text": text,
        "reasoning": reasoning,
        "body": body,
        "status": "complete",
        "created_at": stamp(seq).replace(tzinfo=None),
    }


async def every_row(engine: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the three tables, with the columns revision 0003 had, as comparable
    values (JSON as text with sorted keys)."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    async with engine.connect() as conn:
        for table in (CONVERSATIONS, RUNS, MESSAGES):
            rows = (await conn.execute(sa.select(*table.c).order_by(table.c.id))).all()
            found[table.name] = [
                tuple(json.dumps(v, sort_keys=True) if isinstance(v, dict) else v for v in row)
                for row in rows
            ]
    return found
