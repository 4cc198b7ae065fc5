"""What interactive views (MCP Apps) cost: a view's document read and a view's call back,
through the views API, against a real MCP server with an MCP App
(``tests/tools/mcp_apps_server.py``, a stdio subprocess) and a Python tool with a view.

One agentstream app on a real uvicorn (in a thread with its own loop), a SQLite file, the
scripted model. A conversation draws the board once; then, per request, timed from the
client:

- ``conversation``: the conversation's ``GET`` (an API read to compare with);
- ``document first``: a conversation's first read (the MCP server's ``resources/read``, the
  origins checked, the row kept), one new conversation each;
- ``document kept``: the same conversation's next reads (the store's row);
- ``call mcp``: ``add_card`` called back from the view (listing the app tools, the MCP call);
- ``call python``: a Python tool called back from its view;
- ``answer``: a chat tray turn that calls ``show_board`` (its payload carries the result),
  against one that calls a tool without a view, to see what drawing by a view adds to a turn.

Printed: p50/p90 ms per kind::

    .venv/bin/python bench/views.py [--requests 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
from stream_overhead import percentile  # noqa: E402

from agentstream import Agent, View, tool  # noqa: E402
from agentstream.providers.registry import ModelRegistry  # noqa: E402
from agentstream.providers.scripted import ScriptedProvider  # noqa: E402
from agentstream.server.app import create_app  # noqa: E402
from agentstream.server.settings import Settings  # noqa: E402
from agentstream.store import SqlConversationStore, create_engine, upgrade  # noqa: E402
from agentstream.tools.mcp import MCPTools  # noqa: E402
from tests.server.helpers import LiveServer, datas, parse_sse  # noqa: E402
from tests.tools import mcp_apps_server  # noqa: E402

BOARD = mcp_apps_server.VIEW_URI


@tool(view=View(html="<p>notes</p>"))
def show_notes(topic: str) -> dict[str, Any]:
    """Show the notes on a topic."""
    return {"topic": topic}


@tool(visibility=("app",))
def count_notes(topic: str) -> str:
    """Count the notes (the notes view's button)."""
    return f"{topic}: 2"


@tool
def plain_board(team: str) -> dict[str, Any]:
    """The board without a view."""
    return {"team": team, "cards": ["Plan the sprint", "Fix the login bug"]}


def rule(word: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    calls = [{"name": name, "arguments": arguments}]
    return {"match": word, "turns": [{"tool_calls": calls}, {"text": "Done."}]}


RULES = {
    "rules": [
        rule("notes", "show_notes", {"topic": "deploys"}),
        rule("plain", "plain_board", {"team": "core"}),
        rule("board", "show_board", {"team": "core"}),
    ]
}


def timed(samples: list[float], send: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    response = send(*args, **kwargs)
    samples.append((time.perf_counter() - started) * 1000)
    assert response.status_code == 200, response.text
    return response


def ask(client: httpx.Client, message: str) -> str:
    response = client.post("/api/chat/stream", json={"message": message})
    assert response.status_code == 200, response.text
    conversation: str = datas(parse_sse(response.text))[-1]["payload"]["conversation_id"]
    return conversation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    n = parser.parse_args().requests
    with tempfile.TemporaryDirectory() as home:
        store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{home}/views.db"))
        asyncio.run(upgrade(store.engine))
        board = MCPTools.stdio(sys.executable, [mcp_apps_server.__file__], label="board")
        agent = Agent(
            model=ScriptedProvider(RULES), tools=[board, show_notes, count_notes, plain_board]
        )
        settings = Settings(host="127.0.0.1", data_dir=Path(home) / "data")
        models = ModelRegistry([], discover=False)
        server = LiveServer(create_app(agent, settings=settings, store=store, models=models))
        server.start()
        samples: dict[str, list[float]] = {
            k: []
            for k in (
                "conversation",
                "document first",
                "document kept",
                "call mcp",
                "call python",
                "answer, view",
                "answer, no view",
            )
        }
        try:
            with server.client() as client:
                views = "/api/conversations/{}/views"
                for _ in range(n):
                    conversation = ask(client, "show the board")
                    query = {"source": "board", "uri": BOARD}
                    url = views.format(conversation) + "/document"
                    timed(samples["document first"], client.get, url, params=query)
                    timed(samples["document kept"], client.get, url, params=query)
                    shown = f"/api/conversations/{conversation}"
                    timed(samples["conversation"], client.get, shown)
                notes = ask(client, "my notes")
                local = {"source": "agentstream", "uri": "ui://agentstream/show_notes"}
                client.get(views.format(notes) + "/document", params=local)
                calls = views.format(conversation) + "/calls"
                card = {"source": "board", "uri": BOARD, "name": "add_card"}
                count = {**local, "name": "count_notes", "arguments": {"topic": "deploys"}}
                for i in range(n):
                    body = {**card, "arguments": {"team": "bench", "title": f"card {i}"}}
                    timed(samples["call mcp"], client.post, calls, json=body)
                    local_calls = views.format(notes) + "/calls"
                    timed(samples["call python"], client.post, local_calls, json=count)
                for _ in range(n):
                    for kind, message in (("answer, view", "board"), ("answer, no view", "plain")):
                        body = {"message": message}
                        timed(samples[kind], client.post, "/api/chat/stream", json=body)
        finally:
            server.call(board.aclose())
            server.stop()
            asyncio.run(store.close())
    print(f"{'kind':<18} {'p50 ms':>8} {'p90 ms':>8}   ({n} requests each)")
    for kind, values in samples.items():
        print(f"{kind:<18} {percentile(values, 0.5):8.2f} {percentile(values, 0.9):8.2f}")


if __name__ == "__main__":
    main()
