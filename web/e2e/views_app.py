"""The agent the interactive views' end-to-end tests talk to (``e2e/views.e2e.ts``): a
scripted model, a real MCP server with an MCP App (``tests/tools/mcp_apps_server.py``, the
``mcp`` package's Apps support, started as a stdio subprocess) and a Python tool with a view
of its own.

- ``slow board``  the same call, then an answer streamed over several seconds (the view is
             shown while it streams)
- ``board``  the MCP server's ``show_board`` (drawn by its view, which adds cards through the
             app-only ``add_card`` and tries the model-only ``delete_board``)
- ``notes``  the Python tool ``show_notes``, whose view calls back ``count_notes`` and
             ``archive_notes`` (which needs the user's approval)
- anything else: a plain answer (the message a view sends lands here)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from agentstream import Agent, View, tool
from agentstream.chat import ChatConfig
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools.mcp import MCPTools

BOARD_SERVER = Path(__file__).resolve().parents[2] / "tests" / "tools" / "mcp_apps_server.py"

NOTES_VIEW = """<!doctype html><html><body>
<p id="notes">Waiting…</p><button id="count" type="button">Count</button><p id="counted"></p>
<button id="archive" type="button">Archive</button><p id="archived"></p>
<script>
let id = 0; const waiting = new Map();
const ask = (method, params) => new Promise((ok, no) => {
  waiting.set(++id, { ok, no });
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
});
addEventListener("message", (e) => {
  const m = e.data;
  if (m.id && waiting.has(m.id)) {
    const w = waiting.get(m.id); waiting.delete(m.id);
    return m.error ? w.no(new Error(m.error.message)) : w.ok(m.result);
  }
  if (m.method === "ui/notifications/tool-result")
    document.getElementById("notes").textContent = m.params.structuredContent.notes.join(", ");
});
document.getElementById("count").onclick = async () => {
  const r = await ask("tools/call", { name: "count_notes", arguments: { topic: "deploys" } });
  document.getElementById("counted").textContent = r.content[0].text;
};
document.getElementById("archive").onclick = () =>
  ask("tools/call", { name: "archive_notes", arguments: { topic: "deploys" } }).then(
    (r) => { document.getElementById("archived").textContent = r.content[0].text; },
    (e) => { document.getElementById("archived").textContent = "not archived: " + e.message; });
ask("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "notes" } })
  .then(() => parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized" }, "*"));
</script></body></html>"""


@tool(view=View(html=NOTES_VIEW))
def show_notes(topic: str) -> dict[str, Any]:
    """Show the notes on a topic."""
    return {"topic": topic, "notes": ["ship on Fridays", "page the lead"]}


@tool(visibility=("app",))
def count_notes(topic: str) -> str:
    """How many notes a topic has (for the notes view)."""
    return f"{topic}: 2 notes"


@tool(visibility=("app",), requires_approval=True)
def archive_notes(topic: str) -> str:
    """Archive a topic's notes (the notes view's button; the user agrees first)."""
    return f"archived {topic}"


def _call(word: str, name: str, arguments: dict[str, Any], answer: str) -> dict[str, Any]:
    return {
        "match": word,
        "turns": [{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": answer}],
    }


SLOW_ANSWER = " ".join(["The board is being read out slowly."] * 8)

RULES = {
    "rules": [
        {
            "match": "slow board",
            "turns": [
                {"tool_calls": [{"name": "show_board", "arguments": {"team": "core"}}]},
                {"text": SLOW_ANSWER, "delay": 0.1},
            ],
        },
        _call("board", "show_board", {"team": "core"}, "Here is the board."),
        _call("notes", "show_notes", {"topic": "deploys"}, "Here are your notes."),
        {"turns": [{"text": "Noted."}]},
    ]
}

board = MCPTools.stdio(sys.executable, [str(BOARD_SERVER)], label="board")

agent = Agent(
    model=ScriptedProvider(RULES, model="e2e-views"),
    tools=[board, show_notes, count_notes, archive_notes],
    name="views",
)

chat = ChatConfig(app_name="Views")
