"""The backend's data: one SQLite file, created with its catalogue on first use.

Rules and alerts belong to a tenant (a caller without one is the default tenant); each tenant
starts with the sample rules, each user with a few sample alerts in their inbox. Workflows are
checked here (:func:`workflow_errors`) before anything is written, so the REST API's create,
update and dry-run validation give the same answers.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema

from examples.workflows.backend import catalog

__all__ = ["InvalidWorkflow", "NotFound", "WorkflowStore", "workflow_errors"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS action_types (
    id TEXT PRIMARY KEY, name TEXT UNIQUE NOT NULL, description TEXT NOT NULL,
    config_schema TEXT NOT NULL, output_ports TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trigger_types (
    id TEXT PRIMARY KEY, name TEXT UNIQUE NOT NULL, description TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY, schema_name TEXT NOT NULL, table_name TEXT NOT NULL,
    description TEXT NOT NULL, columns TEXT NOT NULL, UNIQUE (schema_name, table_name));
CREATE TABLE IF NOT EXISTS rules (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
    entity_id TEXT NOT NULL REFERENCES entities(id),
    trigger_type_id TEXT NOT NULL REFERENCES trigger_types(id),
    is_active INTEGER NOT NULL, created_by TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, UNIQUE (tenant, name));
CREATE TABLE IF NOT EXISTS rule_actions (
    id TEXT PRIMARY KEY, rule_id TEXT NOT NULL REFERENCES rules(id) ON DELETE CASCADE,
    name TEXT NOT NULL, action_type TEXT NOT NULL, config TEXT NOT NULL, position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rule_edges (
    id TEXT PRIMARY KEY, rule_id TEXT NOT NULL REFERENCES rules(id) ON DELETE CASCADE,
    source_action_id TEXT, target_action_id TEXT NOT NULL, edge_type TEXT NOT NULL,
    source_output TEXT, position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS alerts (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, rule_id TEXT REFERENCES rules(id) ON DELETE SET NULL,
    title TEXT NOT NULL, message TEXT NOT NULL, severity TEXT NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alert_recipients (
    alert_id TEXT NOT NULL REFERENCES alerts(id) ON DELETE CASCADE, user_id TEXT NOT NULL,
    name TEXT NOT NULL, PRIMARY KEY (alert_id, user_id));
CREATE TABLE IF NOT EXISTS seeded (tenant TEXT NOT NULL, user_id TEXT NOT NULL,
    PRIMARY KEY (tenant, user_id));
"""


class NotFound(LookupError):
    """No such record for this caller (another tenant's records do not exist for them)."""


class InvalidWorkflow(ValueError):
    """The workflow cannot be saved; ``errors`` says every reason."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _id() -> str:
    return str(uuid.uuid4())


class WorkflowStore:
    """The backend's database. Thread-safe: each operation opens its own connection (FastAPI
    runs the sync endpoints in worker threads)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seed_lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.executescript(SCHEMA)
            if db.execute("SELECT COUNT(*) FROM action_types").fetchone()[0] == 0:
                self._seed_catalog(db)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA journal_mode = WAL")
        try:
            with db:
                yield db
        finally:
            db.close()

    # --- the catalogue ----------------------------------------------------------------------

    def _seed_catalog(self, db: sqlite3.Connection) -> None:
        for t in catalog.ACTION_TYPES:
            db.execute(
                "INSERT INTO action_types VALUES (?, ?, ?, ?, ?)",
                (
                    _id(),
                    t["name"],
                    t["description"],
                    json.dumps(t["config_schema"]),
                    json.dumps(t["output_ports"]),
                ),
            )
        for trigger in catalog.TRIGGER_TYPES:
            db.execute(
                "INSERT INTO trigger_types VALUES (?, ?, ?)",
                (_id(), trigger["name"], trigger["description"]),
            )
        for e in catalog.ENTITIES:
            columns = [{"name": n, "type": t} for n, t in e["columns"]]
            db.execute(
                "INSERT INTO entities VALUES (?, ?, ?, ?, ?)",
                (_id(), e["schema"], e["name"], e["description"], json.dumps(columns)),
            )

    def action_types(self) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM action_types ORDER BY name").fetchall()
        return [
            {
                "id": r["id"],
                "name": r["name"],
                "description": r["description"],
                "config_schema": json.loads(r["config_schema"]),
                "output_ports": json.loads(r["output_ports"]),
            }
            for r in rows
        ]

    def trigger_types(self) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM trigger_types ORDER BY rowid").fetchall()
        return [dict(r) for r in rows]

    def entities(self) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute("SELECT * FROM entities ORDER BY schema_name, table_name").fetchall()
        return [_entity(r) for r in rows]

    def entity(self, schema: str, table: str) -> dict[str, Any]:
        with self._db() as db:
            row = db.execute(
                "SELECT * FROM entities WHERE schema_name = ? AND table_name = ?", (schema, table)
            ).fetchone()
        if row is None:
            raise NotFound(f"no table {schema}.{table}")
        return _entity(row)

    # --- tenants' sample data ------------------------------------------------------------

    def ensure_seeded(self, tenant: str, user_id: str, user_name: str) -> None:
        """The sample rules for a tenant the first time anyone of it calls, and sample alerts
        for each user the first time they call."""
        with self._seed_lock, self._db() as db:
            if not db.execute(
                "SELECT 1 FROM seeded WHERE tenant = ? AND user_id = ''", (tenant,)
            ).fetchone():
                for rule in catalog.SAMPLE_RULES:
                    body = self._resolved(db, rule)
                    self._write_rule(db, tenant, "system", body, rule_id=None)
                db.execute("INSERT INTO seeded VALUES (?, '')", (tenant,))
            if not db.execute(
                "SELECT 1 FROM seeded WHERE tenant = ? AND user_id = ?", (tenant, user_id)
            ).fetchone():
                for alert in catalog.SAMPLE_ALERTS:
                    rule = db.execute(
                        "SELECT id FROM rules WHERE tenant = ? AND name = ?",
                        (tenant, alert["rule"]),
                    ).fetchone()
                    alert_id = _id()
                    db.execute(
                        "INSERT INTO alerts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            alert_id,
                            tenant,
                            rule["id"] if rule else None,
                            alert["title"],
                            alert["message"],
                            alert["severity"],
                            alert["status"],
                            _now(),
                        ),
                    )
                    for recipient, name in [(user_id, user_name), *alert["others"]]:
                        db.execute(
                            "INSERT INTO alert_recipients VALUES (?, ?, ?)",
                            (alert_id, recipient, name),
                        )
                db.execute("INSERT INTO seeded VALUES (?, ?)", (tenant, user_id))

    def _resolved(self, db: sqlite3.Connection, rule: dict[str, Any]) -> dict[str, Any]:
        schema, table = rule["entity"].split(".")
        entity = db.execute(
            "SELECT id FROM entities WHERE schema_name = ? AND table_name = ?", (schema, table)
        ).fetchone()
        trigger = db.execute(
            "SELECT id FROM trigger_types WHERE name = ?", (rule["trigger_type"],)
        ).fetchone()
        return {
            **rule,
            "entity_id": entity["id"],
            "trigger_type_id": trigger["id"],
            "is_active": rule.get("is_active", True),
        }

    # --- rules ----------------------------------------------------------------------------

    def list_rules(self, tenant: str) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute(_RULE_SELECT + " WHERE r.tenant = ? ORDER BY r.name", (tenant,))
            return [self._rule(db, row, details=False) for row in rows.fetchall()]

    def get_rule(self, tenant: str, rule_id: str) -> dict[str, Any]:
        with self._db() as db:
            row = db.execute(
                _RULE_SELECT + " WHERE r.tenant = ? AND r.id = ?", (tenant, rule_id)
            ).fetchone()
            if row is None:
                raise NotFound(f"no rule {rule_id}")
            return self._rule(db, row, details=True)

    def _rule(self, db: sqlite3.Connection, row: sqlite3.Row, *, details: bool) -> dict[str, Any]:
        rule = {
            "id": row["id"],
            "name": row["name"],
            "description": row["description"],
            "entity_id": row["entity_id"],
            "entity_schema": row["schema_name"],
            "entity_name": row["table_name"],
            "trigger_type_id": row["trigger_type_id"],
            "trigger_type": row["trigger_name"],
            "is_active": bool(row["is_active"]),
            "created_by": row["created_by"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }
        actions = db.execute(
            "SELECT * FROM rule_actions WHERE rule_id = ? ORDER BY position", (row["id"],)
        ).fetchall()
        names = {a["id"]: a["name"] for a in actions}
        rule["action_count"] = len(actions)
        if details:
            rule["actions"] = [
                {
                    "id": a["id"],
                    "name": a["name"],
                    "action_type": a["action_type"],
                    "config": json.loads(a["config"]),
                }
                for a in actions
            ]
            edges = db.execute(
                "SELECT * FROM rule_edges WHERE rule_id = ? ORDER BY position", (row["id"],)
            ).fetchall()
            rule["edges"] = [
                {
                    "id": e["id"],
                    "edge_type": e["edge_type"],
                    "source_action": names.get(e["source_action_id"]),
                    "source_action_id": e["source_action_id"],
                    "target_action": names[e["target_action_id"]],
                    "target_action_id": e["target_action_id"],
                    "source_output": e["source_output"],
                }
                for e in edges
            ]
        return rule

    def check(self, tenant: str, body: dict[str, Any], rule_id: str | None = None) -> list[str]:
        """What is wrong with ``body`` as a rule of ``tenant`` (empty: it can be saved)."""
        with self._db() as db:
            return self._check(db, tenant, body, rule_id)

    def _check(
        self, db: sqlite3.Connection, tenant: str, body: dict[str, Any], rule_id: str | None
    ) -> list[str]:
        types = {t["name"]: t for t in self.action_types()}
        errors = workflow_errors(body, types)
        if not db.execute("SELECT 1 FROM entities WHERE id = ?", (body["entity_id"],)).fetchone():
            errors.append(f"entity_id {body['entity_id']!r} is not a known entity")
        trigger = body["trigger_type_id"]
        if not db.execute("SELECT 1 FROM trigger_types WHERE id = ?", (trigger,)).fetchone():
            errors.append(f"trigger_type_id {trigger!r} is not a known trigger type")
        if (
            rule_id is not None
            and not db.execute(
                "SELECT 1 FROM rules WHERE tenant = ? AND id = ?", (tenant, rule_id)
            ).fetchone()
        ):
            raise NotFound(f"no rule {rule_id}")
        clash = db.execute(
            "SELECT id FROM rules WHERE tenant = ? AND name = ?", (tenant, body["name"])
        ).fetchone()
        if clash is not None and clash["id"] != rule_id:
            errors.append(f"a rule named {body['name']!r} already exists ({clash['id']})")
        return errors

    def save_rule(
        self, tenant: str, user_id: str, body: dict[str, Any], rule_id: str | None = None
    ) -> dict[str, Any]:
        """Create (``rule_id`` None) or replace a rule; raises :class:`InvalidWorkflow` with
        every problem, :class:`NotFound` for another tenant's or a missing rule."""
        with self._db() as db:
            errors = self._check(db, tenant, body, rule_id)
            if errors:
                raise InvalidWorkflow(errors)
            saved = self._write_rule(db, tenant, user_id, body, rule_id=rule_id)
        return self.get_rule(tenant, saved)

    def _write_rule(
        self,
        db: sqlite3.Connection,
        tenant: str,
        user_id: str,
        body: dict[str, Any],
        *,
        rule_id: str | None,
    ) -> str:
        now = _now()
        if rule_id is None:
            rule_id = _id()
            db.execute(
                "INSERT INTO rules VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rule_id,
                    tenant,
                    body["name"],
                    body.get("description") or "",
                    body["entity_id"],
                    body["trigger_type_id"],
                    int(body.get("is_active", True)),
                    user_id,
                    now,
                    now,
                ),
            )
        else:
            db.execute(
                "UPDATE rules SET name = ?, description = ?, entity_id = ?, trigger_type_id = ?, "
                "is_active = ?, updated_at = ? WHERE id = ? AND tenant = ?",
                (
                    body["name"],
                    body.get("description") or "",
                    body["entity_id"],
                    body["trigger_type_id"],
                    int(body.get("is_active", True)),
                    now,
                    rule_id,
                    tenant,
                ),
            )
            db.execute("DELETE FROM rule_edges WHERE rule_id = ?", (rule_id,))
            db.execute("DELETE FROM rule_actions WHERE rule_id = ?", (rule_id,))
        ids: dict[str, str] = {}
        for position, action in enumerate(body["actions"]):
            ids[action["name"]] = _id()
            db.execute(
                "INSERT INTO rule_actions VALUES (?, ?, ?, ?, ?, ?)",
                (
                    ids[action["name"]],
                    rule_id,
                    action["name"],
                    action["action_type"],
                    json.dumps(action.get("config") or {}),
                    position,
                ),
            )
        for position, edge in enumerate(body["edges"]):
            source = edge.get("source_action")
            db.execute(
                "INSERT INTO rule_edges VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    _id(),
                    rule_id,
                    ids[source] if source else None,
                    ids[edge["target_action"]],
                    "sequence" if source else "start",
                    edge.get("source_output") if source else None,
                    position,
                ),
            )
        return rule_id

    # --- alerts ---------------------------------------------------------------------------

    def alerts_for_user(self, tenant: str, user_id: str) -> list[dict[str, Any]]:
        with self._db() as db:
            rows = db.execute(
                "SELECT a.* FROM alerts a JOIN alert_recipients r ON r.alert_id = a.id "
                "WHERE a.tenant = ? AND r.user_id = ? ORDER BY a.created_at DESC, a.rowid DESC",
                (tenant, user_id),
            ).fetchall()
            return [self._alert(db, row) for row in rows]

    def alerts_for_rule(self, tenant: str, user_id: str, rule_id: str) -> list[dict[str, Any]]:
        """The alerts ``rule_id`` fired that ``user_id`` receives."""
        self.get_rule(tenant, rule_id)  # NotFound for another tenant's rule
        return [a for a in self.alerts_for_user(tenant, user_id) if a["rule_id"] == rule_id]

    def alert(self, tenant: str, user_id: str, alert_id: str) -> dict[str, Any]:
        with self._db() as db:
            row = db.execute(
                "SELECT a.* FROM alerts a JOIN alert_recipients r ON r.alert_id = a.id "
                "WHERE a.tenant = ? AND a.id = ? AND r.user_id = ?",
                (tenant, alert_id, user_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"no alert {alert_id}")
            return self._alert(db, row)

    def _alert(self, db: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
        recipients = db.execute(
            "SELECT user_id, name FROM alert_recipients WHERE alert_id = ? ORDER BY rowid",
            (row["id"],),
        ).fetchall()
        rule = db.execute("SELECT name FROM rules WHERE id = ?", (row["rule_id"],)).fetchone()
        return {
            "id": row["id"],
            "rule_id": row["rule_id"],
            "rule_name": rule["name"] if rule else None,
            "title": row["title"],
            "message": row["message"],
            "severity": row["severity"],
            "status": row["status"],
            "created_at": row["created_at"],
            "recipients": [{"id": r["user_id"], "name": r["name"]} for r in recipients],
        }


_RULE_SELECT = (
    "SELECT r.*, e.schema_name, e.table_name, t.name AS trigger_name FROM rules r "
    "JOIN entities e ON e.id = r.entity_id JOIN trigger_types t ON t.id = r.trigger_type_id"
)


def _entity(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "schema": row["schema_name"],
        "name": row["table_name"],
        "qualified_name": f"{row['schema_name']}.{row['table_name']}",
        "description": row["description"],
        "columns": json.loads(row["columns"]),
    }


def workflow_errors(body: dict[str, Any], types: dict[str, dict[str, Any]]) -> list[str]:
    """Every problem with a workflow's actions and edges: unknown action types, configs that
    do not fit their type's schema, edges naming unknown actions or ports, no start, cycles,
    actions no path reaches."""
    errors: list[str] = []
    actions: Sequence[dict[str, Any]] = body["actions"]
    names = [a["name"] for a in actions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        errors.append(f"action names must be unique: {twice}")
    by_name = {a["name"]: a for a in actions}
    for action in actions:
        kind = types.get(action["action_type"])
        if kind is None:
            errors.append(
                f"action {action['name']!r}: unknown action_type {action['action_type']!r} "
                f"(known: {sorted(types)})"
            )
            continue
        validator = jsonschema.Draft202012Validator(kind["config_schema"])
        for problem in sorted(validator.iter_errors(action.get("config") or {}), key=str):
            where = "/".join(str(p) for p in problem.path)
            errors.append(
                f"action {action['name']!r} config{'.' + where if where else ''}: {problem.message}"
            )
    following: dict[str | None, list[str]] = {}
    for edge in body["edges"]:
        source, target = edge.get("source_action"), edge["target_action"]
        if target not in by_name:
            errors.append(f"edge to unknown action {target!r}")
            continue
        if source is None:
            following.setdefault(None, []).append(target)
            continue
        if source not in by_name:
            errors.append(f"edge from unknown action {source!r}")
            continue
        following.setdefault(source, []).append(target)
        kind = types.get(by_name[source]["action_type"])
        port = edge.get("source_output")
        ports = [p["name"] for p in kind["output_ports"]] if kind else []
        if kind and port not in ports:
            errors.append(
                f"edge {source!r} -> {target!r}: {by_name[source]['action_type']} has no output "
                f"port {port!r} (ports: {ports})"
            )
    if not following.get(None):
        errors.append("the workflow needs a start edge (an action that runs first)")
    reached: set[str] = set()
    stack = list(following.get(None, []))
    while stack:
        name = stack.pop()
        if name not in reached:
            reached.add(name)
            stack.extend(following.get(name, []))
    unreached = [n for n in names if n not in reached]
    if following.get(None) and unreached:
        errors.append(f"actions no edge reaches: {unreached}")
    if _has_cycle(following):
        errors.append("the edges form a cycle")
    return errors


def _has_cycle(following: dict[str | None, list[str]]) -> bool:
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(name: str) -> bool:
        if state.get(name) == 1:
            return True
        if state.get(name) == 2:
            return False
        state[name] = 1
        if any(visit(n) for n in following.get(name, [])):
            return True
        state[name] = 2
        return False

    return any(visit(n) for n in list(following) if n is not None)
