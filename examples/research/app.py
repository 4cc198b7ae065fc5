"""The research assistant: helps an analyst search a corpus of articles and build reports.

Serve it from the repository root::

    agentstream serve examples.research.app:agent --chat examples.research.app:chat \\
        --server examples.research.app:server

Its endpoint of record is ``POST /api/chat/stream`` (the chat tray protocol: ``status``,
``text_delta`` with ``[[tool:N]]`` markers, ``tool_start``, ``tool_progress``,
``tool_complete``, ``complete`` with suggested values and actions, custom payloads, tool
history and diagnostics), which the web UI speaks.

* Pages, tabs and subtabs (``reports`` > ``articles`` > ``extraction``, ``reports`` >
  ``notes``, ``search``), each with its identity, context builder and tools, chosen by the
  request's ``context``.
* Global tools: ``search_articles`` (streaming progress; a ``search_results`` payload) and
  ``fetch_article``, over a generated corpus of 320 articles indexed with SQLite FTS5.
* LLM payloads ``schema_proposal`` (extraction subtab) and ``query_suggestion`` (everywhere),
  and the ``apply_schema`` server action that applies a proposal to its report.
* ``/host/``: a small multi-page research portal (plain HTML in ``host/``) with the chat
  tray embedded (``<agentstream-chat>``): its pages and tabs are the tray's context, it
  handles the ``open_article`` action itself (its reader), and it shows the open report's
  articles and extraction fields from ``/example-api`` (``api.py``) as the assistant changes
  them. In the standalone UI, "Open in the reader" opens the portal's reader on that
  article (the action's ``url``).
"""

from __future__ import annotations

from pathlib import Path

from starlette.staticfiles import StaticFiles

from agentstream import Agent
from agentstream.chat import ChatConfig
from agentstream.server.config import ServerConfig
from examples._common import data_dir, model_or
from examples.research.api import MOUNT, research_api
from examples.research.corpus import Library
from examples.research.demo import research_demo_model
from examples.research.pages import research_pages
from examples.research.payloads import CLOSE_CHAT, PAYLOAD_TYPES, actions_for
from examples.research.tools import ResearchTools

__all__ = ["agent", "build", "chat", "server"]

IDENTITY = """You are a research assistant for analysts. Search the article corpus with
`search_articles`, read articles with `fetch_article`, cite articles by id (A0042), and say
plainly when the corpus has nothing on a question."""

HOST_DIR = Path(__file__).parent / "host"
"""The research portal the tray is embedded in, served at ``/host/``."""

GUIDELINES = """Answer in Markdown, briefly: a sentence, then the articles as a list.
Offer suggested values for the obvious next questions."""


def build(directory: Path | None = None) -> tuple[Agent, ChatConfig, ServerConfig]:
    """The agent, its chat configuration and what it adds to the server (the portal the tray
    is embedded in, at ``/host/``), with the corpus in ``directory``."""
    library = Library((directory or data_dir("research")) / "library.db")
    tools = ResearchTools(library)
    agent = Agent(
        model=model_or(research_demo_model()),
        tools=[tools.search_articles, tools.fetch_article],
        instructions=IDENTITY,
        name="research",
        max_turns=5,
    )
    chat = ChatConfig(
        app_name="Research assistant",
        starter_prompts=[
            "Find recent articles on CRISPR base editing",
            "Read A0072",
        ],
        identity=IDENTITY,
        guidelines=GUIDELINES,
        pages=research_pages(library, tools),
        payload_types=PAYLOAD_TYPES,
        client_actions=[CLOSE_CHAT],
        server_actions=actions_for(library),
    )
    server = ServerConfig(
        mounts={
            "/host": StaticFiles(directory=HOST_DIR, html=True),
            MOUNT: research_api(library),
        }
    )
    return agent, chat, server


agent, chat, server = build()
