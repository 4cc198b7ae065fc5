from __future__ import annotations

from agentstream.chat.jsonblocks import cut, find_blocks


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
    assert cut(text, [(block.start, block.end)]).text == "Answer.\n\nBye."


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


def test_a_cut_touches_only_the_whitespace_around_each_block() -> None:
    text = "    code\n\n\n\nx  \nA\n\nXX\n\n\nb  \nc\t"
    done = cut(text, [(text.index("XX"), text.index("XX") + 2)])
    # The seam keeps its blank line; indentation, hard breaks and blank lines elsewhere stay.
    assert done.text == "    code\n\n\n\nx  \nA\n\nb  \nc\t"
    assert done.moved(text.index("b")) == done.text.index("b")
    assert done.moved(text.index("XX") + 1) == done.text.index("b")  # inside: after the seam
    assert done.moved(3) == 3


def test_a_seam_keeps_the_break_it_stood_in_and_none_at_either_end() -> None:
    assert cut("a X b", [(2, 3)]).text == "a b"
    assert cut("a\nX\nb", [(2, 3)]).text == "a\nb"
    assert cut("X\n\nb", [(0, 1)]).text == "b"
    assert cut("a.\nX\nY", [(3, 4), (5, 6)]).text == "a."  # neighbours share one seam


def test_cuts_compose() -> None:
    first = cut("a\n\nX\n\nbc Y", [(3, 4)])
    second = cut(first.text, [(len(first.text) - 1, len(first.text))])
    both = first.then(second)
    assert both.text == "a\n\nbc"
    assert both.moved(len("a\n\nX\n\nb")) == len("a\n\nb")
