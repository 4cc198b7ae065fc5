from __future__ import annotations

from agentstream.chat.jsonblocks import find_blocks, remove_spans, tidy


def test_a_block_ends_where_its_brackets_balance_and_text_may_follow() -> None:
    text = 'Hi.\nMARK: [{"a": 1}, {"b": [2, 3]}] and then prose.'
    [block] = find_blocks(text, "MARK:")
    assert block.value == [{"a": 1}, {"b": [2, 3]}]
    assert text[block.end :] == " and then prose."
    assert text[block.start : block.start + 5] == "MARK:"


def test_brackets_and_escaped_quotes_inside_strings_do_not_end_the_block() -> None:
    text = 'MARK: {"label": "a ] tricky } \\" [ string", "n": [1]} tail'
    [block] = find_blocks(text, "MARK:")
    assert block.value == {"label": 'a ] tricky } " [ string', "n": [1]}
    assert text[block.end :] == " tail"


def test_a_code_fence_around_the_json_is_accepted_and_removed_with_it() -> None:
    text = 'Answer.\n\nMARK:\n```json\n[{"a": 1}]\n```\nBye.'
    [block] = find_blocks(text, "MARK:")
    assert block.value == [{"a": 1}]
    assert tidy(remove_spans(text, [(block.start, block.end)])) == "Answer.\n\nBye."


def test_unterminated_json_is_reported_not_parsed() -> None:
    [block] = find_blocks('MARK: [{"a": 1}, {"b"', "MARK:")
    assert block.value is None
    assert block.error == "the JSON is not terminated"


def test_balanced_but_invalid_json_is_reported() -> None:
    [block] = find_blocks("MARK: [{'single': 'quotes'}] ok", "MARK:")
    assert block.error is not None
    assert block.error.startswith("invalid JSON")


def test_a_marker_mentioned_in_prose_is_not_a_block() -> None:
    assert find_blocks("Use MARK: when you want.", "MARK:") == []


def test_every_occurrence_is_found() -> None:
    blocks = find_blocks('MARK: [1] x MARK: {"a": 2}', "MARK:")
    assert [b.value for b in blocks] == [[1], {"a": 2}]


def test_remove_spans_and_tidy() -> None:
    text = "a\n\nXX\n\n\nb  \nc"
    assert tidy(remove_spans(text, [(3, 5)])) == "a\n\nb\nc"
