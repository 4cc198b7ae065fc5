"""``agentstream db``: bring the conversation database up to date, or say where it is.

``agentstream db upgrade`` applies the store's migrations (a deploy step for PostgreSQL;
SQLite is also upgraded automatically when the server starts). ``agentstream db current``
prints the revision the database is at and the newest one this version ships. Both take
``--database-url`` or read ``AGENTSTREAM_DATABASE_URL``, else use the SQLite file that
``agentstream serve`` would (``-a myapp:agent`` for an application's own); the password never
appears in output.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    for name, help_text in (
        ("upgrade", "apply migrations up to the newest revision"),
        ("current", "show the database's revision and the newest one available"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text)
        action.add_argument(
            "--database-url",
            metavar="URL",
            help="SQLAlchemy URL (default: $AGENTSTREAM_DATABASE_URL, else the SQLite file "
            "`agentstream serve` uses in $AGENTSTREAM_DATA_DIR, default ./data)",
        )
        action.add_argument(
            "-a",
            "--agent",
            metavar="MODULE:AGENT",
            help="the application whose own SQLite file to use, as `agentstream serve "
            "MODULE:AGENT` does (default: the demo's)",
        )


def run(args: argparse.Namespace) -> int:
    # Alembic logs a line per autogenerate plugin when imported; only its migration lines
    # are worth showing here.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    from sqlalchemy.exc import SQLAlchemyError

    from agentstream.cli.loading import app_name
    from agentstream.store import current_revision, head_revision, resolve_database_url, upgrade
    from agentstream.store.engine import safe_url

    url = resolve_database_url(args.database_url, app=app_name(getattr(args, "agent", None)))
    where = safe_url(url)
    try:
        if args.db_command == "upgrade":
            asyncio.run(upgrade(url))
            print(f"{where}: at revision {head_revision()} (newest)")
            return 0
        current = asyncio.run(current_revision(url))
    except (SQLAlchemyError, OSError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        print(f"agentstream db {args.db_command}: cannot use {where}: {reason}", file=sys.stderr)
        return 1
    head = head_revision()
    state = "up to date" if current == head else "run `agentstream db upgrade`"
    print(f"{where}: at revision {current or 'none'}, newest {head} ({state})")
    return 0
