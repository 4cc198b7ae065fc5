from __future__ import annotations

from agentstream.chat.markers import (
    TOOL_MARKER,
    defuse_tool_markers,
    insert_tool_markers,
    strip_tool_markers,
    tool_history_payload,
    tool_marker,
)
from agentstream.events import Payload, ToolHistoryEntry


def _entry(index: int, offset: int) -> ToolHistoryEntry:
    return ToolHistoryEntry(
        index=index,
        call_id=f"c{index}",
        tool_name="search_articles",
        input={"query": "CRISPR"},
        output=f"Found {index}",
        text_offset=offset,
    )


def test_markers_go_where_the_calls_finished() -> None:
    message = "Let me search for that...\n\nI found 5 relevant articles."
    placed = insert_tool_markers(message, [_entry(0, 25)])
    assert placed == "Let me search for that...\n\n[[tool:0]]\n\nI found 5 relevant articles."
    assert strip_tool_markers(placed) == message
    assert tool_marker(3) == "[[tool:3]]"


def test_markers_the_model_wrote_are_defused_so_only_the_calls_markers_remain() -> None:
    message = "See [[tool:0]] and [[tool:99]].Done, [[tool:0]]"
    placed = insert_tool_markers(message, [_entry(0, 31)])
    assert [int(m[1]) for m in TOOL_MARKER.finditer(placed)] == [0]
    assert placed == (
        "See [[tool\u2060:0]] and [[tool\u2060:99]].\n\n[[tool:0]]\n\nDone, [[tool\u2060:0]]"
    )
    # No call: nothing placed, the look-alikes still defused and the text otherwise untouched.
    assert insert_tool_markers("\n  [[tool:1]] x", []) == "\n  [[tool\u2060:1]] x"
    assert defuse_tool_markers("[[tool:x]] [tool:1] [[tool:12]]") == (
        "[[tool:x]] [tool:1] [[tool\u2060:12]]"
    )


def test_tool_history_payload_is_the_trays_shape_in_index_order() -> None:
    structured = ToolHistoryEntry(
        index=2, call_id="c2", tool_name="lookup", input={}, output={"n": 1}, is_error=True
    )
    assert tool_history_payload([_entry(1, 0), structured, _entry(0, 0)]) == Payload(
        kind="tool_history",
        data=[
            {
                "tool_name": "search_articles",
                "input": {"query": "CRISPR"},
                "output": "Found 0",
                "index": 0,
                "is_error": False,
            },
            {
                "tool_name": "search_articles",
                "input": {"query": "CRISPR"},
                "output": "Found 1",
                "index": 1,
                "is_error": False,
            },
            {"tool_name": "lookup", "input": {}, "output": '{"n":1}', "index": 2, "is_error": True},
        ],
    )


def _filtered(*chunks: str | None) -> str:
    """What a client sees of ``chunks`` (``None`` starts a new turn)."""
    from agentstream.chat.markers import MarkerLineFilter

    stream = MarkerLineFilter(["SUGGESTED_VALUES:", "SUGGESTED_ACTIONS:", "SCHEMA_PROPOSAL"])
    shown = []
    for chunk in chunks:
        if chunk is None:
            stream.new_turn()
        else:
            shown.append(stream.feed(chunk))
    return "".join(shown) + stream.flush()


def test_marker_blocks_are_withheld_from_the_stream_even_split_over_deltas() -> None:
    assert (
        _filtered("Pick one.", "\n", "SUGGESTED_", "VALUES: [", '{"label": "a", "value": "b"}]')
        == "Pick one.\n"
    )
    assert _filtered('Line one\nSCHEMA_PROPOSAL: {"t": 1}\nmore') == "Line one\n"
    assert _filtered("Done.", None, "SUGGESTED_ACTIONS: [", "]") == "Done."  # a turn opens a line


def test_text_that_only_looks_like_a_marker_is_shown() -> None:
    assert _filtered("NOTE that ", "OK: fine\nDONE") == "NOTE that OK: fine\nDONE"
    assert _filtered("ABC") == "ABC"  # held while it could become a marker, then released
    assert _filtered("", "Hello") == "Hello"
    assert _filtered("See SUGGESTED_VALUES: [1] inline") == "See SUGGESTED_VALUES: [1] inline"


def test_only_known_markers_hold_the_text_back() -> None:
    """A line that merely looks like a marker (an upper-case word, a colon and a bracket)
    never stalls the stream: the rest of the turn still shows."""
    assert _filtered("NOTE: [optional] step\n", "More text.") == "NOTE: [optional] step\nMore text."
    assert _filtered("JSON: {", '"a": 1}\nDone.') == 'JSON: {"a": 1}\nDone.'


def test_a_line_is_held_only_while_it_can_still_become_a_known_marker() -> None:
    from agentstream.chat.markers import MarkerLineFilter

    stream = MarkerLineFilter(["SUGGESTED_VALUES:"])
    assert stream.feed("SUGG") == ""  # could still be one
    assert stream.feed("ESTION: try this") == "SUGGESTION: try this"  # no longer can


def test_a_tool_history_entry_carries_the_tools_display_text_when_it_has_one() -> None:
    from dataclasses import replace

    from agentstream.chat.markers import tool_history_entry

    shown = replace(_entry(0, 0), display="Searching for CRISPR")
    assert tool_history_entry(shown)["display"] == "Searching for CRISPR"
    assert "display" not in tool_history_entry(_entry(0, 0))
    assert tool_history_payload([shown]).data == [tool_history_entry(shown)]
