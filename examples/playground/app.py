"""The data playground: an admin chat over each brand's shop data.

Serve it from the repository root::

    agentstream serve examples.playground.app:agent --chat examples.playground.app:chat \\
        --server examples.playground.app:server

Its endpoint of record is ``POST /api/chat/agent-chat/stream?brandRef=acme`` (the agent chat
stream API: ``status``, ``thinking``, ``message`` deltas in Markdown, ``tool_call``,
``tool_result``, ``metadata``, ``final``), with the models of ``GET /api/chat/models``.

* Two tenants, ``acme`` and ``globex``, each with its own SQLite database (customers,
  products, orders) and documents, generated on first use.
* ``sqlPatternTool`` answers data requests with parameterised, read-only SQL on the
  request's brand only.
* ``searchDocuments`` searches that brand's documents (SQLite FTS5); it is offered only
  while the request's ``ragEnabled`` is true.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentstream import Agent, Toolset
from agentstream.chat import ChatConfig, ContextField
from agentstream.server.config import ServerConfig
from examples._common import data_dir
from examples.playground.demo import playground_models
from examples.playground.tenants import TENANTS, TenantData
from examples.playground.tools import RAG_SCOPE, search_documents_tool, sql_pattern_tool

__all__ = ["agent", "build", "chat", "server"]

IDENTITY = """You are the data playground's analyst for a brand's admin team.
Answer data questions with `sqlPatternTool` (pass the request in plain words) and show rows as
a Markdown table with the query you ran. Answer questions about policies, shipping or support
with `searchDocuments` when it is available, quoting the passages' titles. You only ever see
the current brand's data."""


def build(directory: Path | None = None) -> tuple[Agent, ChatConfig, ServerConfig]:
    """The agent, its chat configuration and what it adds to the server (nothing), with
    tenant data in ``directory``."""
    data = TenantData(directory or data_dir("playground"))
    toolset = Toolset([sql_pattern_tool(data)])
    toolset.add(search_documents_tool(data), scope=RAG_SCOPE)
    offline = playground_models()
    configured = os.environ.get("AGENTSTREAM_MODEL")
    agent = Agent(
        model=configured or next(iter(offline.values())),
        offered_models={} if configured else offline,
        tools=toolset,
        instructions=IDENTITY,
        name="playground",
    )
    chat = ChatConfig(
        app_name="Data playground",
        starter_prompts=[
            "Show 10 customers",
            "Top 5 products by revenue",
            "What is the returns policy?",
        ],
        option_scopes={"rag_enabled": RAG_SCOPE},
        # The web UI's controls for what the playground protocol carries in its own fields.
        context_fields=[
            ContextField(key="brandRef", label="Brand", choices=tuple(sorted(TENANTS))),
            ContextField(
                key="ragEnabled", label="Search documents", default=True, option="rag_enabled"
            ),
        ],
    )
    return agent, chat, ServerConfig()


agent, chat, server = build()
