"""The ops agent: an on-call assistant that checks services and alerts the admin.

Serve it from the repository root::

    agentstream serve examples.ops.app:agent --chat examples.ops.app:chat \\
        --server examples.ops.app:server

then sign in at http://127.0.0.1:8000/example-api/sign-in. Its endpoint of record is
``POST /agent/stream`` (the agent API: ``start``, ``token``, ``tool_start``/``tool_end`` with
``display`` texts, ``conversation``, ``warning``, ``done``); the web UI talks to the same agent.

* ``alert_admin`` opens a ticket in the example's own SQLite database, listed at
  ``GET /example-api/tickets``.
* The sign-in page sets the session cookie; every chat endpoint requires it.
* Conversations are stored; send ``conversation_id`` to continue one.
* The monitoring tools come from a tool source; ``PUT /example-api/monitoring
  {"online": false}`` simulates its outage, and the next run warns ``tool_fallback`` and
  answers without tools.
"""

from __future__ import annotations

from pathlib import Path

from agentstream import Agent
from agentstream.chat import ChatConfig
from agentstream.server.config import ServerConfig
from examples._common import data_dir, model_or
from examples.ops.api import MOUNT, SIGN_IN, OpsSessions, ops_api
from examples.ops.database import OpsDatabase
from examples.ops.demo import ops_demo_model
from examples.ops.tools import MonitoringTools, alert_admin_tool

__all__ = ["agent", "build", "chat", "server"]

IDENTITY = """You are the ops agent, the on-call engineers' assistant.
When someone reports a problem, check the service they name before anything else, then
alert the admin with `alert_admin` when a service is degraded or down: say what you checked
and what you found, and choose the priority from the impact on customers. Never alert for a
healthy service. Answer briefly, with the ticket number when you opened one."""


def build(directory: Path | None = None) -> tuple[Agent, ChatConfig, ServerConfig]:
    """The agent, its chat configuration and what it adds to the server (its REST API, its
    sign-in sessions), with data in ``directory`` (default: the examples' data directory)."""
    db = OpsDatabase((directory or data_dir("ops")) / "ops.db")
    agent = Agent(
        model=model_or(ops_demo_model()),
        tools=[alert_admin_tool(db), MonitoringTools(db)],
        instructions=IDENTITY,
        name="ops",
    )
    chat = ChatConfig(
        app_name="Ops agent",
        starter_prompts=["The billing page is down for customers", "Is search healthy?"],
    )
    server = ServerConfig(
        mounts={MOUNT: ops_api(db)}, authenticator=OpsSessions(db), sign_in_url=SIGN_IN
    )
    return agent, chat, server


agent, chat, server = build()
