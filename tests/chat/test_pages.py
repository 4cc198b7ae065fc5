from __future__ import annotations

import pytest

from agentstream import Agent
from agentstream.chat import ChatConfig, ChatHooks
from agentstream.chat.actions import ClientAction
from agentstream.chat.pages import LocationKeys, Page, Tab, locate, page_scope
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner
from agentstream.tools import Toolset, tool


@tool
def global_search(query: str) -> str:
    """Search everything."""
    return query


@tool
def page_tool() -> str:
    """Page."""
    return "p"


@tool
def tab_tool() -> str:
    """Tab."""
    return "t"


@tool
def subtab_tool() -> str:
    """Subtab."""
    return "s"


REPORTS = Page(
    name="reports",
    identity="You help with reports.",
    tools=[page_tool],
    payload_types=["a"],
    client_actions=[ClientAction(name="close_chat")],
    instructions="Page rules.",
    tabs=[
        Tab(
            name="articles",
            tools=[tab_tool, page_tool],
            payload_types=["b", "a"],
            client_actions=[ClientAction(name="open_article"), ClientAction(name="close_chat")],
            subtabs=[Tab(name="notes", tools=[subtab_tool], instructions="Notes rules.")],
        )
    ],
)
PAGES = {"reports": REPORTS}


def test_scopes_follow_page_tab_subtab() -> None:
    context = {"current_page": "reports", "active_tab": "articles", "active_subtab": "notes"}
    location = locate(PAGES, context)
    assert location.scopes() == [
        "page:reports",
        "page:reports/tab:articles",
        "page:reports/tab:articles/subtab:notes",
    ]
    assert location.page is REPORTS
    assert location.subtab is not None
    assert location.subtab.name == "notes"


def test_the_toolset_resolves_global_then_page_tab_subtab_without_duplicates() -> None:
    toolset = Toolset([global_search])
    REPORTS.install(toolset)
    location = locate(
        PAGES, {"current_page": "reports", "active_tab": "articles", "active_subtab": "notes"}
    )
    names = [t.name for t in toolset.resolve(location.scopes())]
    assert names == ["global_search", "page_tool", "tab_tool", "subtab_tool"]
    page_only = locate(PAGES, {"current_page": "reports"})
    assert [t.name for t in toolset.resolve(page_only.scopes())] == ["global_search", "page_tool"]


def test_declarations_are_combined_outermost_first() -> None:
    location = locate(
        PAGES, {"current_page": "reports", "active_tab": "articles", "active_subtab": "notes"}
    )
    assert location.payload_types() == ["a", "b"]
    assert [a.name for a in location.client_actions()] == ["close_chat", "open_article"]
    assert location.instructions() == ["Page rules.", "Notes rules."]
    assert location.identity == "You help with reports."


def test_undeclared_names_still_give_scopes_but_no_config() -> None:
    location = locate(PAGES, {"current_page": "settings", "active_tab": "profile"})
    assert location.scopes() == ["page:settings", "page:settings/tab:profile"]
    assert location.page is None
    assert location.identity is None


def test_a_tab_without_a_page_is_ignored_and_odd_contexts_have_no_location() -> None:
    assert locate(PAGES, {"active_tab": "articles"}).scopes() == []
    assert locate(PAGES, "a string context").scopes() == []
    assert locate(PAGES, None).scopes() == []
    assert locate(PAGES, {"current_page": 7}).scopes() == []


def test_location_keys_are_configurable() -> None:
    keys = LocationKeys(page="view", tab="section", subtab="panel")
    location = locate(PAGES, {"view": "reports", "section": "articles"}, keys)
    assert location.scopes() == ["page:reports", "page:reports/tab:articles"]


def test_page_scope() -> None:
    assert page_scope("p") == "page:p"
    assert page_scope("p", "t") == "page:p/tab:t"
    assert page_scope("p", "t", "s") == "page:p/tab:t/subtab:s"
    assert page_scope("p", None, "s") == "page:p"


def test_a_tab_or_subtab_has_its_own_identity_and_context_builder() -> None:
    def page_context(context: object) -> str:
        return "page data"

    def notes_context(context: object) -> str:
        return "notes data"

    page = Page(
        name="reports",
        identity="Page identity.",
        context=page_context,
        tabs=[
            Tab(name="articles"),
            Tab(
                name="notes",
                identity="Notes identity.",
                context=notes_context,
                subtabs=[Tab(name="drafts", identity="Drafts identity.")],
            ),
        ],
    )
    pages = {"reports": page}
    on_articles = locate(pages, {"current_page": "reports", "active_tab": "articles"})
    on_notes = locate(pages, {"current_page": "reports", "active_tab": "notes"})
    on_drafts = locate(
        pages, {"current_page": "reports", "active_tab": "notes", "active_subtab": "drafts"}
    )
    assert on_articles.identity == "Page identity."
    assert on_articles.context_builder == ("reports", page_context)
    assert on_notes.identity == "Notes identity."
    assert on_notes.context_builder == ("notes", notes_context)
    assert on_drafts.identity == "Drafts identity."
    assert on_drafts.context_builder == ("notes", notes_context)


def test_a_page_tool_that_cannot_be_described_is_refused_when_the_config_is_built() -> None:
    def anything(*args: str) -> str:
        """Takes whatever it is given."""
        return ""

    with pytest.raises(TypeError, match="cannot be described"):
        ChatConfig(pages=[Page(name="reports", tools=[anything])])


def test_the_pages_tools_are_the_agents_once_a_runner_has_the_hooks() -> None:
    """Before any request: a capabilities listing or a tool count at start-up sees them."""

    def export_report(name: str) -> str:
        """Export a report."""
        return name

    def add_note(text: str) -> str:
        """Add a note."""
        return text

    config = ChatConfig(
        pages=[
            Page(name="reports", tools=[export_report], tabs=[Tab(name="notes", tools=[add_note])])
        ]
    )
    assert [t.name for t in config.page_tools.resolve([page_scope("reports")])] == ["export_report"]
    agent = Agent(model=ScriptedProvider({"turns": [{"text": ["hi"]}]}))
    hooks = ChatHooks(config)
    assert agent.toolset.resolve([page_scope("reports")]) == []
    Runner(agent, hooks=hooks)
    Runner(agent, hooks=hooks)  # a second runner adds nothing twice
    scopes = [page_scope("reports"), page_scope("reports", "notes")]
    assert [t.name for t in agent.toolset.resolve(scopes)] == ["export_report", "add_note"]
    assert len(agent.toolset) == 2
