"""Alembic environment: runs on the connection that :mod:`agentstream.store.migrate` passes in.

Offline (``--sql``) mode is not supported: migrations always run against a live database.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from agentstream.store.models import Base

VERSION_TABLE = "agentstream_alembic_version"

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("agentstream migrations run through agentstream.store.migrate")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
