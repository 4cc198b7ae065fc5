from __future__ import annotations

import pytest

from agentstream.chat import ChatConfig, ContextType, Page, PayloadType, Tab
from agentstream.chat.pages import Location


def test_a_page_declaring_an_unknown_payload_type_is_a_clear_error() -> None:
    with pytest.raises(
        ValueError, match=r"tab 'articles' declares unknown payload type\(s\) \['nope'\]"
    ):
        ChatConfig(
            pages=[Page(name="reports", tabs=[Tab(name="articles", payload_types=["nope"])])]
        )
    ChatConfig(
        pages=[Page(name="reports", payload_types=["x"])],
        payload_types=[PayloadType.llm("x", instructions="i", is_global=False)],
    )


def test_pages_declared_twice_and_bad_layouts_are_errors() -> None:
    with pytest.raises(ValueError, match=r"pages declared twice: \['a'\]"):
        ChatConfig(pages=[Page(name="a"), Page(name="a")])
    with pytest.raises(ValueError, match="unknown prompt section"):
        ChatConfig(layout=["identity", "footer"])


def test_scopes_are_the_context_type_then_the_location() -> None:
    config = ChatConfig(context_types={"tables": ContextType(scopes=["tables", "shared"])})
    location = config.locate({"current_page": "reports", "active_tab": "articles"})
    assert config.scopes("workflow", location) == [
        "workflow",
        "page:reports",
        "page:reports/tab:articles",
    ]
    assert config.scopes("tables", Location()) == ["tables", "shared"]
    assert config.scopes(None, Location()) == []


def test_request_options_turn_on_their_scopes() -> None:
    from agentstream.chat.pages import Location

    config = ChatConfig(option_scopes={"rag_enabled": "rag"})
    assert config.scopes(None, Location(), {"rag_enabled": True}) == ["rag"]
    assert config.scopes(None, Location(), {"rag_enabled": False}) == []
    assert config.scopes(None, Location(), {"rag_enabled": "yes"}) == []
    assert config.scopes(None, Location(), None) == []
