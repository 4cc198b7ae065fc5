from __future__ import annotations

from typing import Any

from agentstream.chat.payloads import (
    PayloadType,
    PayloadTypes,
    default_summary,
    describe_payload_types,
    payload_manifest,
)
from agentstream.events import Payload

SCHEMA = PayloadType.llm(
    "schema_proposal",
    instructions="Propose a schema when the user asks for one.",
    description="Database schema suggestions",
)


def _tables_only(value: Any) -> Any:
    if not isinstance(value, dict) or "tables" not in value:
        raise ValueError("a schema proposal needs tables")
    return value


def test_the_marker_defaults_to_the_upper_case_name() -> None:
    assert SCHEMA.marker == "SCHEMA_PROPOSAL:"
    assert PayloadType.tool("pubmed_article").marker is None


def test_an_llm_payload_is_parsed_removed_and_given_an_id_and_summary() -> None:
    registry = PayloadTypes([SCHEMA])
    text = 'Here is my proposal.\n\nSCHEMA_PROPOSAL: {"name": "Inventory", "tables": ["items"]}\n\nLike it?'
    found = registry.extract(text, registry.available())
    assert found.text == "Here is my proposal.\n\nLike it?"
    [payload] = found.payloads
    assert payload.kind == "schema_proposal"
    assert payload.data == {"name": "Inventory", "tables": ["items"]}
    assert payload.summary == "Schema proposal: Inventory"
    assert payload.payload_id is not None
    assert len(payload.payload_id) == 8


def test_a_parser_rejection_leaves_the_block_in_the_text() -> None:
    registry = PayloadTypes(
        [PayloadType.llm("schema_proposal", instructions="x", parser=_tables_only)]
    )
    text = 'Proposal: SCHEMA_PROPOSAL: {"name": "x"}'
    found = registry.extract(text, registry.available())
    assert found.text == text
    assert found.payloads == ()
    assert found.problems == (
        "SCHEMA_PROPOSAL: rejected by its parser: a schema proposal needs tables",
    )


def test_types_that_are_not_available_are_not_parsed() -> None:
    page_only = PayloadType.llm("query_suggestion", instructions="x", is_global=False)
    registry = PayloadTypes([SCHEMA, page_only])
    assert [t.name for t in registry.available()] == ["schema_proposal"]
    assert [t.name for t in registry.available(["query_suggestion"])] == [
        "schema_proposal",
        "query_suggestion",
    ]
    text = 'QUERY_SUGGESTION: {"query": "CRISPR"}'
    assert registry.extract(text, registry.available()).text == text


def test_payloads_come_out_in_text_order() -> None:
    query = PayloadType.llm("query_suggestion", instructions="x")
    registry = PayloadTypes([SCHEMA, query])
    text = 'QUERY_SUGGESTION: {"query": "a"} SCHEMA_PROPOSAL: {"name": "b"}'
    found = registry.extract(text, registry.available())
    assert [p.kind for p in found.payloads] == ["query_suggestion", "schema_proposal"]
    assert found.text == ""


def test_complete_keeps_ids_and_uses_the_types_summarizer() -> None:
    registry = PayloadTypes(
        [PayloadType.tool("search_results", summarize=lambda d: f"{len(d)} results\nfor you")]
    )
    done = registry.complete(Payload(kind="search_results", data=[1, 2], payload_id="p1"))
    assert done == Payload(
        kind="search_results", data=[1, 2], summary="2 results for you", payload_id="p1"
    )


def test_default_summaries_are_one_short_line() -> None:
    assert default_summary("query_suggestion", {"query": "CRISPR"}) == "Query suggestion: CRISPR"
    assert default_summary("results", [1, 2, 3]) == "Results: 3 items"
    long = default_summary("note", {"text": "word " * 100})
    assert len(long) == 100
    assert long.endswith("…")
    assert "\n" not in long


def test_manifest_lists_earlier_payloads() -> None:
    assert payload_manifest([]) is None
    manifest = payload_manifest(
        [
            Payload(
                kind="schema_proposal", data={}, summary="Schema proposal: X", payload_id="abc12345"
            )
        ]
    )
    assert manifest is not None
    assert "- `abc12345` schema_proposal: Schema proposal: X" in manifest
    assert (
        payload_manifest([Payload(kind="tool_history", data=[]), Payload(kind="x", data=1)]) is None
    )


def test_the_capabilities_text_carries_instructions_and_marker() -> None:
    text = describe_payload_types([SCHEMA, PayloadType.tool("ignored")])
    assert text is not None
    assert "`schema_proposal`: Database schema suggestions" in text
    assert "Propose a schema when the user asks for one." in text
    assert "`SCHEMA_PROPOSAL: {...}`" in text
    assert "ignored" not in text
    assert describe_payload_types([PayloadType.tool("x")]) is None


def test_a_crashing_parser_or_summarizer_does_not_lose_the_answer() -> None:
    def crash(value: Any) -> Any:
        return value["missing"]

    registry = PayloadTypes(
        [
            PayloadType.llm("a", instructions="x", parser=crash),
            PayloadType.llm("b", instructions="x", summarize=crash),
        ]
    )
    text = 'A: {"k": 1} B: {"name": "bee"}'
    found = registry.extract(text, registry.available())
    assert found.text == 'A: {"k": 1}'
    assert found.problems == ("A: ignored: its parser failed",)
    [payload] = found.payloads
    assert payload.summary == "B: bee"
