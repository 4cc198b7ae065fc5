"""``/openapi.json`` sends client authors to the docs: every route belongs to a group whose
description names its reference page, and that page exists and is in the site's navigation."""

from __future__ import annotations

import re
from pathlib import Path

from agentstream import Agent
from agentstream.server import create_app
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine

DOCS = Path(__file__).parents[2] / "docs"
NAV = (DOCS.parent / "mkdocs.yml").read_text()


def test_every_route_group_names_a_page_of_the_docs_site(tmp_path: Path) -> None:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"))
    schema = create_app(Agent(model=None), settings=Settings(), store=store).openapi()
    described = {tag["name"]: tag["description"] for tag in schema["tags"]}
    used = {tag for path in schema["paths"].values() for op in path.values() for tag in op["tags"]}
    assert used == set(described), "a route group without a reference page, or a page unused"
    for name, description in described.items():
        page = re.search(r"`docs/([\w/.-]+\.md)`", description)
        assert page, f"{name!r} names no page: {description!r}"
        assert (DOCS / page[1]).is_file(), f"{name!r} names a missing page {page[1]}"
        assert page[1] in NAV, f"{page[1]} is not in the site's navigation"
