"""The run pipeline's statements, compiled once and run on the database driver's own cursor.

Every run start and finish executes the same few statements (insert the run, insert its
messages, allocate sequence numbers, record the outcome). Through ``Connection.execute`` each
costs SQLAlchemy about 20 µs of Python (a cache lookup, an execution context, event hooks, a
result object) against a few µs that SQLite spends on it; under load that time is spent on
the writer thread while the event loop waits for the GIL. A :class:`Prepared` statement is
compiled the first time it meets a dialect, with the same SQL text and the same bound-value
conversions SQLAlchemy would use (its ``bind_processors``), and later runs only convert the
values and call the driver's ``execute``. Results are plain integers or nothing. A
statement the shortcut cannot run exactly as SQLAlchemy would (a driver that takes named
parameters, such as psycopg; columns with Python-side defaults) goes through
``Connection.execute`` instead. Driver errors are raised as SQLAlchemy's (``IntegrityError``
and the rest), so callers handle them as before.

Reads and everything off the hot path go through SQLAlchemy as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.dml import UpdateBase

__all__ = ["Prepared"]


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]
    convert: tuple[Callable[[Any], Any] | None, ...]


class Prepared:
    """``statement`` (a Core ``insert``/``update``, with bound parameters), compiled per
    dialect and parameter names, and run with :meth:`execute`, :meth:`executemany` or
    :meth:`scalar` on the driver's cursor of a SQLAlchemy ``Connection``.

    Where the shortcut would not do exactly what ``Connection.execute`` does (a driver that
    takes named parameters, columns with Python-side defaults, parameters that expand), the
    statement simply goes through ``Connection.execute``: never wrong, only slower."""

    __slots__ = ("_compiled", "_statement")

    def __init__(self, statement: UpdateBase) -> None:
        self._statement = statement
        self._compiled: dict[tuple[type[Dialect], tuple[str, ...]], _Compiled | None] = {}

    def execute(self, conn: Connection, parameters: Mapping[str, Any]) -> None:
        compiled = self._compile(conn, parameters)
        if compiled is None:
            conn.execute(self._statement, parameters)
            return
        self._run(conn, compiled, [_values(compiled, parameters)], many=False).close()

    def executemany(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        """One statement for ``rows`` (which all have the same keys)."""
        if not rows:
            return
        compiled = self._compile(conn, rows[0])
        if compiled is None:
            conn.execute(self._statement, list(rows))
            return
        values = [_values(compiled, row) for row in rows]
        self._run(conn, compiled, values, many=len(values) > 1).close()

    def scalar(self, conn: Connection, parameters: Mapping[str, Any]) -> int | None:
        """The first column of the first row the statement returns (an integer), or None."""
        compiled = self._compile(conn, parameters)
        if compiled is None:
            value = conn.scalar(self._statement, parameters)
            return None if value is None else int(value)
        cursor = self._run(conn, compiled, [_values(compiled, parameters)], many=False)
        try:
            row = cursor.fetchone()
        finally:
            cursor.close()
        return None if row is None else int(row[0])

    def _compile(self, conn: Connection, parameters: Mapping[str, Any]) -> _Compiled | None:
        dialect = conn.dialect
        key = (type(dialect), tuple(parameters))
        if key in self._compiled:
            return self._compiled[key]
        found = self._compiled[key] = _shortcut(self._statement, dialect, list(parameters))
        return found

    def _run(
        self, conn: Connection, compiled: _Compiled, values: list[tuple[Any, ...]], *, many: bool
    ) -> Any:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            if many:
                cursor.executemany(compiled.sql, values)
            else:
                cursor.execute(compiled.sql, values[0])
        except conn.dialect.loaded_dbapi.Error as exc:
            cursor.close()
            raise DBAPIError.instance(
                compiled.sql,
                None,
                exc,
                conn.dialect.loaded_dbapi.Error,
                hide_parameters=True,
                dialect=conn.dialect,
            ) from exc
        return cursor


def _values(compiled: _Compiled, parameters: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(
        value if convert is None else convert(value)
        for value, convert in zip(
            (parameters[name] for name in compiled.names), compiled.convert, strict=True
        )
    )


def _shortcut(statement: UpdateBase, dialect: Dialect, keys: list[str]) -> _Compiled | None:
    """``statement`` compiled for ``dialect`` and parameters ``keys``, or None when only
    ``Connection.execute`` runs it right."""
    compiled = statement.compile(dialect=dialect, column_keys=keys)
    if compiled.insert_prefetch or compiled.update_prefetch:
        return None  # Python-side column defaults, which the execution context fills in
    names = tuple(compiled.positiontup or ())
    if (not names and compiled.binds) or "POSTCOMPILE" in compiled.string:
        return None  # named parameters, or ones that expand when executed
    processors = compiled._bind_processors  # what SQLAlchemy converts each value with
    convert: list[Callable[[Any], Any] | None] = []
    for name in names:
        processor = processors.get(name)
        if processor is not None and not callable(processor):
            return None  # a tuple parameter
        convert.append(processor)
    return _Compiled(sql=compiled.string, names=names, convert=tuple(convert))
