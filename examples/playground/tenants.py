"""The playground's two tenants, ``acme`` and ``globex``: each has its own SQLite database
(customers, products, orders) and its own documents, generated on first use.

A tenant is only ever found by its exact name among :data:`TENANTS`; file paths are built
from that known name, never from what a request said.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from agentstream import ToolContext

__all__ = ["TENANTS", "Tenant", "TenantData", "UnknownTenant", "tenant_name"]


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    company: str
    seed: int
    cities: tuple[str, ...]
    products: tuple[tuple[str, str, float], ...]
    documents: tuple[tuple[str, str], ...]


TENANTS: dict[str, Tenant] = {
    "acme": Tenant(
        name="acme",
        company="Acme Tools",
        seed=1,
        cities=("Springfield", "Shelbyville", "Capital City", "Ogdenville"),
        products=(
            ("Rocket skates", "outdoor", 149.0),
            ("Anvil (50 kg)", "hardware", 89.5),
            ("Giant magnet", "hardware", 45.0),
            ("Portable hole", "novelty", 19.99),
            ("Tornado seeds", "garden", 7.25),
            ("Jet-propelled pogo stick", "outdoor", 129.0),
        ),
        documents=(
            (
                "Returns policy",
                "Acme accepts returns within 30 days of delivery. Products must be unused and "
                "in their original packaging. Rocket skates that have been fired cannot be "
                "returned. Refunds reach the original payment method within 5 business days.",
            ),
            (
                "Shipping",
                "Orders ship from the Springfield warehouse within two business days. "
                "Anvils ship by freight only. Express shipping costs 15 dollars.",
            ),
            (
                "Loyalty programme",
                "Customers in the gold segment get 10 percent off every order and free "
                "express shipping. A customer reaches gold after 1,000 dollars of orders.",
            ),
        ),
    ),
    "globex": Tenant(
        name="globex",
        company="Globex Corporation",
        seed=2,
        cities=("Cypress Creek", "Lyon", "Osaka", "Toronto", "Hamburg"),
        products=(
            ("Doomsday device (kit)", "engineering", 999.0),
            ("Hammock", "outdoor", 59.0),
            ("Ergonomic desk", "office", 420.0),
            ("Volcano lair lease", "real estate", 2500.0),
            ("Laser pointer", "office", 12.0),
        ),
        documents=(
            (
                "Returns policy",
                "Globex accepts returns within 14 days for office products only. Engineering "
                "kits are final sale. Contact support with your order number to start a return.",
            ),
            (
                "Support hours",
                "Globex support answers from 8:00 to 18:00 Central time, Monday to Friday. "
                "Premium customers have a 24/7 line.",
            ),
            (
                "Data retention",
                "Globex keeps order records for seven years and deletes inactive customer "
                "accounts after three years without an order.",
            ),
        ),
    ),
}

FIRST_NAMES = ("Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas")
LAST_NAMES = ("Novak", "Silva", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Weber", "Costa")
SEGMENTS = ("standard", "silver", "gold")
STATUSES = ("delivered", "delivered", "delivered", "shipped", "pending", "cancelled")

SCHEMA = """
CREATE TABLE customers (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, city TEXT NOT NULL,
    segment TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
    product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL,
    total REAL NOT NULL, status TEXT NOT NULL, ordered_at TEXT NOT NULL
);
CREATE VIRTUAL TABLE documents USING fts5(title, body, tokenize = 'porter unicode61');
"""


class UnknownTenant(LookupError):
    pass


def tenant_name(ctx: ToolContext) -> str:
    """The tenant a tool call serves: the one the caller's token grants, else the request's
    ``brandRef`` (the playground protocol checks it against the token's tenants). The brand
    picked in the web UI (the context's ``brandRef``) is only a preference, so it counts only
    in anonymous local mode, whose one local user may see every tenant anyway (``acme`` when
    none is named); with real users it could name a tenant nobody checked."""
    named = ctx.principal.tenant_id or ctx.options.get("brand_ref")
    local = ctx.principal.user_id == "local" and not ctx.principal.claims
    if named is None and local and isinstance(ctx.context, dict):
        named = ctx.context.get("brandRef")
    if named is None and local:
        named = "acme"
    if not isinstance(named, str) or named not in TENANTS:
        raise UnknownTenant(
            f"unknown brand {named!r}: this playground has {', '.join(sorted(TENANTS))}"
        )
    return named


class TenantData:
    """Where each tenant's files live (``<directory>/<tenant>/``), created on first use."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._ready: set[str] = set()

    def database(self, name: str) -> Path:
        """The tenant's database file, generated if missing."""
        tenant = TENANTS[name]
        path = self.directory / tenant.name / "shop.db"
        if tenant.name in self._ready:
            return path
        with self._lock:
            if tenant.name not in self._ready:
                if not path.exists():
                    _generate(tenant, path)
                self._ready.add(tenant.name)
        return path


def _generate(tenant: Tenant, path: Path) -> None:
    """Write the tenant's documents (as Markdown files, for people to read) and its database
    (with the documents indexed for full-text search), atomically."""
    rng = random.Random(tenant.seed)
    docs = path.parent / "documents"
    docs.mkdir(parents=True, exist_ok=True)
    for title, body in tenant.documents:
        slug = title.lower().replace(" ", "-")
        (docs / f"{slug}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    partial = path.with_suffix(".tmp")
    partial.unlink(missing_ok=True)
    db = sqlite3.connect(partial)
    try:
        with db:
            db.executescript(SCHEMA)
            start = date(2025, 1, 1)
            for i in range(1, 61):
                first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
                db.execute(
                    "INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        i,
                        f"{first} {last}",
                        f"{first}.{last}{i}@{tenant.name}-customers.example".lower(),
                        rng.choice(tenant.cities),
                        rng.choice(SEGMENTS),
                        (start + timedelta(days=rng.randrange(300))).isoformat(),
                    ),
                )
            for i, (name, category, price) in enumerate(tenant.products, start=1):
                db.execute("INSERT INTO products VALUES (?, ?, ?, ?)", (i, name, category, price))
            for i in range(1, 241):
                product = rng.randrange(len(tenant.products))
                quantity = rng.randint(1, 4)
                db.execute(
                    "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        i,
                        rng.randint(1, 60),
                        product + 1,
                        quantity,
                        round(tenant.products[product][2] * quantity, 2),
                        rng.choice(STATUSES),
                        (start + timedelta(days=rng.randrange(330))).isoformat(),
                    ),
                )
            for file in sorted(docs.glob("*.md")):
                title, _, body = file.read_text(encoding="utf-8").partition("\n\n")
                db.execute(
                    "INSERT INTO documents (title, body) VALUES (?, ?)",
                    (title.lstrip("# ").strip(), body.strip()),
                )
    finally:
        db.close()
    partial.replace(path)
