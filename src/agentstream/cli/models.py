"""``agentstream models``: print the models this deployment offers.

The list the server serves (the data playground's ``listModels()``), built by the same
:class:`~agentstream.server.models.ModelCatalog` for the same agent (``-a``, else the demo
``agentstream serve`` would serve): the agent's model first and default, the models it offers
itself, the configured ones (``AGENTSTREAM_MODELS``) and what reachable Ollama and
OpenAI-compatible servers report. ``--json`` prints it for scripts.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json

from rich.console import Console
from rich.table import Table

from agentstream.cli.loading import AgentLoadError, load_agent
from agentstream.providers.registry import ModelInfo, ModelRegistry
from agentstream.server.models import ModelCatalog

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-a",
        "--agent",
        metavar="MODULE:AGENT",
        help="the agent whose models to list, as `agentstream serve` would serve it "
        "(default: the demo)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--no-discover",
        dest="discover",
        action="store_false",
        help="list configured models only (do not ask Ollama or OpenAI-compatible servers)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="how long to wait for each server's model list (default: 2)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        agent = load_agent(getattr(args, "agent", None))
        registry = ModelRegistry(
            discover=getattr(args, "discover", True),
            discovery_timeout=getattr(args, "timeout", 2.0),
        )
    except (ValueError, AgentLoadError) as exc:  # a bad model entry or agent reference
        Console(stderr=True).print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        return 2
    models = asyncio.run(ModelCatalog(agent, registry).offered())
    if getattr(args, "json", False):
        print(json.dumps([dataclasses.asdict(m) for m in models], indent=2))
    else:
        Console().print(_table(models))
    return 0


def _table(models: list[ModelInfo]) -> Table:
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("")
    table.add_column("id", no_wrap=True)  # ids are copied into config: never cut them
    for column in ("name", "provider", "source"):
        table.add_column(column)
    for m in models:
        table.add_row("*" if m.default else "", m.id, m.display_name, m.provider, m.source)
    return table
