"""``agentstream``: serve, chat, models, db.

Each subcommand lives in its own module with ``configure(parser)`` and ``run(args) -> int``;
the dispatcher imports only the one asked for, so ``agentstream chat`` does not load the web
server and ``agentstream models`` does not load the database driver.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

__all__ = ["main"]

DESCRIPTION = "Stream tool-using AI agents into chat UIs: serve them, chat with them, list models."

COMMANDS = {
    "serve": "Serve agents over HTTP (every dialect and the web UI).",
    "chat": "Run an agent in the terminal and watch it stream.",
    "models": "List the models this deployment offers.",
    "db": "Manage the conversation database (migrations).",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentstream", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, help_text in COMMANDS.items():
        commands.add_parser(name, help=help_text, description=help_text)
    args_list = list(sys.argv[1:] if argv is None else argv)
    # Configure only the chosen subcommand's parser (and import only its module).
    chosen = next((a for a in args_list if a in COMMANDS), None)
    if chosen is not None:
        module = importlib.import_module(f"agentstream.cli.{chosen}")
        module.configure(commands.choices[chosen])
    args = parser.parse_args(args_list)
    configure_logging(verbose=args.verbose)
    module = importlib.import_module(f"agentstream.cli.{args.command}")
    code: int = module.run(args)
    return code


QUIET_LOGGERS = ("httpx", "httpcore")
"""HTTP clients that log every request at INFO: a line per model call and per tool call to an
API, with its full URL (some APIs take a key in the query string). Shown with ``-v`` only."""


def configure_logging(*, verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)


if __name__ == "__main__":
    raise SystemExit(main())
