"""A long conversation written straight into a store, for the UI's long-conversation tests and
its benchmark (``bench/web_long_conversation.ts``).

    .venv/bin/python web/e2e/seed_conversation.py DATA_DIR MESSAGES APP

writes one conversation of the anonymous local user with ``MESSAGES`` prior messages (user
questions and Markdown answers, every fourth answer with a tool call) into the SQLite store that
``agentstream serve APP`` keeps in ``DATA_DIR`` (the server's ``AGENTSTREAM_DATA_DIR``), through
the store's own methods, and prints its id. Answers look like a model's: paragraphs, lists,
code, now and then a table. Message ``n`` holds the word ``needle<n>`` (user) or ``answer<n>``
(assistant), so a test can look for one.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agentstream.cli.loading import app_name
from agentstream.events import RunCompleted, ToolHistoryEntry
from agentstream.ids import uuid7
from agentstream.messages import AssistantMessage, ToolCall, ToolResultPart, ToolResultsMessage
from agentstream.principal import ANONYMOUS
from agentstream.store import SqlConversationStore, resolve_database_url
from agentstream.store.engine import DATA_DIR_ENV

PROSE = (
    "The report covers the quarter's figures, the open questions from the review and what the "
    "team proposes next. Most of the change comes from the two new regions, which grew faster "
    "than planned, while the older markets held steady."
)


def question(n: int) -> str:
    return f"Question {n} (needle{n}): how did region {n % 7} do, and what should we change?"


def answer(n: int) -> tuple[str, str]:
    """Answer ``n`` as two turns: the text before its tool call (if any) and after."""
    before = f"Here is what I found about region {n % 7} (answer{n}).\n\n{PROSE}\n\n"
    parts = [
        "- **Revenue** rose in the second month\n- Costs stayed flat\n- Two accounts churned\n"
    ]
    if n % 3 == 0:
        parts.append(
            "```python\ndef growth(before, after):\n    return (after - before) / before\n"
            f"\nprint(growth(100, {100 + n}))\n```\n"
        )
    if n % 5 == 0:
        parts.append(
            "| region | growth | note |\n|---|---|---|\n"
            f"| north | {n % 9}% | steady |\n| south | {n % 11}% | new office |\n"
        )
    parts.append(f"{PROSE} In short: keep the plan, and look again at region {n % 7} next month.")
    return before, "\n\n".join(parts)


async def seed(data_dir: Path, count: int, app: str) -> str:
    # The file the server will open: each application served keeps a database of its own.
    url = resolve_database_url(env={DATA_DIR_ENV: str(data_dir)}, app=app_name(app))
    async with await SqlConversationStore.open(url, migrate=True) as store:
        conversation: str | None = None
        for n in range(count // 2):
            run_id = uuid7().hex
            started = await store.start_run(
                ANONYMOUS, run_id=run_id, conversation_id=conversation, user_message=question(n)
            )
            conversation = started.conversation_id
            before, after = answer(n)
            history: tuple[ToolHistoryEntry, ...] = ()
            if n % 4 == 1:
                call = ToolCall(id=f"call-{n}", name="lookup_region", arguments={"region": n % 7})
                await store.append_messages(
                    ANONYMOUS,
                    run_id=run_id,
                    conversation_id=conversation,
                    messages=[
                        AssistantMessage(text=before, tool_calls=(call,)),
                        ToolResultsMessage(
                            results=(
                                ToolResultPart(
                                    tool_call_id=call.id, name=call.name, content='{"rows": 12}'
                                ),
                            )
                        ),
                    ],
                )
                history = (
                    ToolHistoryEntry(
                        index=0,
                        call_id=call.id,
                        tool_name=call.name,
                        input=dict(call.arguments),
                        output={"rows": 12},
                        duration_ms=40.0,
                        text_offset=len(before),
                    ),
                )
                final = [AssistantMessage(text=after)]
            else:
                final = [AssistantMessage(text=before + after)]
            await store.finish_run(
                ANONYMOUS,
                run_id=run_id,
                conversation_id=conversation,
                messages=final,
                status="completed",
                completed=RunCompleted(
                    run_id=run_id, seq=1, message=before + after, tool_history=history
                ),
                snapshot=False,
            )
        if conversation is None:  # no prior messages: an empty conversation is not stored
            return ""
        return conversation


if __name__ == "__main__":
    directory = Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    print(asyncio.run(seed(directory, int(sys.argv[2]), sys.argv[3])))
