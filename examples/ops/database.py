"""The ops example's own database: accounts and sign-in sessions, tickets, and the services
its monitoring watches. One SQLite file, created and seeded on first use.

Sessions are opaque random tokens; only their SHA-256 is stored, so a copy of the database
does not sign anyone in. Passwords are kept as scrypt hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from examples._common import SqliteFile

__all__ = ["DEMO_ACCOUNTS", "OpsDatabase", "Ticket", "UnknownService"]

SESSION_SECONDS = 8 * 3600
PRIORITIES = ("low", "medium", "high", "critical")

DEMO_ACCOUNTS = {"maria": "Maria Lopez", "sam": "Sam Okafor"}
"""Seeded on-call engineers; their password is ``oncall-demo`` (shown on the sign-in page)."""
DEMO_PASSWORD = "oncall-demo"

SERVICES = [
    ("billing", "degraded", 2400, 0.12, "502s from the payment gateway since 09:40 UTC"),
    ("checkout", "ok", 180, 0.001, ""),
    ("search", "ok", 95, 0.0, ""),
    ("auth", "ok", 60, 0.0, ""),
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    username TEXT PRIMARY KEY,
    display_name TEXT NOT NULL,
    salt BLOB NOT NULL,
    password_hash BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    username TEXT NOT NULL REFERENCES users(username),
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tickets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message TEXT NOT NULL,
    priority TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    opened_by TEXT NOT NULL,
    conversation_id TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS services (
    name TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    latency_ms INTEGER NOT NULL,
    error_rate REAL NOT NULL,
    note TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS flags (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class UnknownService(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class Ticket:
    id: int
    message: str
    priority: str
    status: str
    opened_by: str
    conversation_id: str | None
    created_at: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "message": self.message,
            "priority": self.priority,
            "status": self.status,
            "opened_by": self.opened_by,
            "conversation_id": self.conversation_id,
            "created_at": self.created_at,
        }


def _hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class OpsDatabase(SqliteFile):
    """The example's SQLite file at ``path``: accounts, sessions, services and tickets."""

    def _create(self, db: sqlite3.Connection) -> None:
        db.executescript(SCHEMA)
        self._seed(db)

    @staticmethod
    def _seed(connection: sqlite3.Connection) -> None:
        for username, display in DEMO_ACCOUNTS.items():
            salt = secrets.token_bytes(16)
            connection.execute(
                "INSERT INTO users VALUES (?, ?, ?, ?)",
                (username, display, salt, _hash_password(DEMO_PASSWORD, salt)),
            )
        connection.executemany("INSERT INTO services VALUES (?, ?, ?, ?, ?)", SERVICES)
        connection.execute("INSERT INTO flags VALUES ('monitoring_online', 'true')")

    # --- accounts and sessions ------------------------------------------------------------

    def sign_in(self, username: str, password: str) -> str | None:
        """A new session token, or ``None`` when the name or password is wrong."""
        with self._connect() as db:
            row = db.execute(
                "SELECT salt, password_hash FROM users WHERE username = ?", (username,)
            ).fetchone()
            if row is None or not hmac.compare_digest(
                _hash_password(password, row["salt"]), row["password_hash"]
            ):
                return None
            token = secrets.token_urlsafe(32)
            db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?)",
                (_token_hash(token), username, time.time() + SESSION_SECONDS),
            )
            db.execute("DELETE FROM sessions WHERE expires_at < ?", (time.time(),))
            return token

    def session_user(self, token: str) -> str | None:
        """Who the session token signs in, while it has not expired."""
        with self._connect() as db:
            row = db.execute(
                "SELECT username FROM sessions WHERE token_hash = ? AND expires_at > ?",
                (_token_hash(token), time.time()),
            ).fetchone()
        return None if row is None else str(row["username"])

    def sign_out(self, token: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM sessions WHERE token_hash = ?", (_token_hash(token),))

    def display_name(self, username: str) -> str:
        with self._connect() as db:
            row = db.execute(
                "SELECT display_name FROM users WHERE username = ?", (username,)
            ).fetchone()
        return username if row is None else str(row["display_name"])

    # --- tickets --------------------------------------------------------------------------

    def open_ticket(
        self, *, message: str, priority: str, opened_by: str, conversation_id: str | None
    ) -> Ticket:
        if priority not in PRIORITIES:
            raise ValueError(f"priority must be one of {', '.join(PRIORITIES)}")
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO tickets (message, priority, opened_by, conversation_id, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (message, priority, opened_by, conversation_id, time.time()),
            )
            ticket_id = cursor.lastrowid
        found = self.ticket(int(ticket_id or 0))
        assert found is not None
        return found

    def ticket(self, ticket_id: int) -> Ticket | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM tickets WHERE id = ?", (ticket_id,)).fetchone()
        return None if row is None else Ticket(**dict(row))

    def tickets(self, *, status: str | None = None, limit: int = 50) -> list[Ticket]:
        query, params = "SELECT * FROM tickets", []
        if status is not None:
            query += " WHERE status = ?"
            params.append(status)
        query += " ORDER BY id DESC LIMIT ?"
        with self._connect() as db:
            rows = db.execute(query, (*params, limit)).fetchall()
        return [Ticket(**dict(row)) for row in rows]

    def close_ticket(self, ticket_id: int) -> Ticket | None:
        with self._connect() as db:
            db.execute("UPDATE tickets SET status = 'closed' WHERE id = ?", (ticket_id,))
        return self.ticket(ticket_id)

    # --- monitoring -----------------------------------------------------------------------

    def monitoring_online(self) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT value FROM flags WHERE key = 'monitoring_online'").fetchone()
        return row is None or row["value"] == "true"

    def set_monitoring_online(self, online: bool) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO flags VALUES ('monitoring_online', ?)",
                ("true" if online else "false",),
            )

    def services(self) -> list[dict[str, Any]]:
        with self._connect() as db:
            rows = db.execute("SELECT * FROM services ORDER BY name").fetchall()
        return [dict(row) for row in rows]

    def service(self, name: str) -> dict[str, Any]:
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM services WHERE name = ?", (name.strip().lower(),)
            ).fetchone()
        if row is None:
            known = ", ".join(s["name"] for s in self.services())
            raise UnknownService(f"no service named {name!r}; known services: {known}")
        return dict(row)
