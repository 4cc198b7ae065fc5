"""Alembic migrations for the store, shipped inside the package.

There is no ``alembic.ini``: :mod:`agentstream.store.migrate` builds the configuration in code
and hands ``env.py`` an open connection. To write a new revision during development::

    python -m agentstream.store.migrate revision -m "what changed"
"""
