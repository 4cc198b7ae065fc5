from __future__ import annotations

import logging

import pytest

from agentstream.chat.suggestions import extract_suggestions, suggestion_instructions
from agentstream.events import SuggestedAction, SuggestedValue


def test_values_and_actions_are_parsed_and_removed_from_the_message() -> None:
    text = (
        "Here is the plan.\n\n"
        'SUGGESTED_VALUES: [{"label": "Yes, proceed", "value": "yes"}, '
        '{"label": "No", "value": "no"}]\n'
        'SUGGESTED_ACTIONS: [{"label": "Apply Changes", "action": "apply_schema", '
        '"handler": "server", "data": {"schema_id": 123}, "style": "primary"}, '
        '{"label": "Close Chat", "action": "close_chat", "handler": "client", '
        '"style": "secondary"}]'
    )
    found = extract_suggestions(text)
    assert found.text == "Here is the plan."
    assert found.values == (
        SuggestedValue(label="Yes, proceed", value="yes"),
        SuggestedValue(label="No", value="no"),
    )
    assert found.actions == (
        SuggestedAction(
            label="Apply Changes",
            action="apply_schema",
            handler="server",
            data={"schema_id": 123},
            style="primary",
        ),
        SuggestedAction(label="Close Chat", action="close_chat", style="secondary"),
    )
    assert found.problems == ()


def test_broken_json_leaves_the_text_as_written_and_logs_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = 'All done.\n\nSUGGESTED_VALUES: [{"label": "Yes", "value": "yes"}, {"label": '
    with caplog.at_level(logging.WARNING, logger="agentstream.chat"):
        found = extract_suggestions(text)
    assert found.text == text
    assert found.values == ()
    assert found.problems == (
        "SUGGESTED_VALUES: ignored: the JSON is not terminated; the text was left as written",
    )
    assert "SUGGESTED_VALUES: ignored" in caplog.text


def test_a_broken_block_does_not_stop_a_good_one() -> None:
    text = 'Hi.\nSUGGESTED_VALUES: [{"label": "A", value: b}]\nSUGGESTED_ACTIONS: [{"label": "Close", "action": "close"}]'
    found = extract_suggestions(text)
    assert found.actions == (SuggestedAction(label="Close", action="close"),)
    assert found.values == ()
    assert found.text == 'Hi.\nSUGGESTED_VALUES: [{"label": "A", value: b}]'
    assert len(found.problems) == 1


def test_invalid_items_are_dropped_and_valid_ones_kept() -> None:
    text = (
        "Ok.\n"
        'SUGGESTED_VALUES: [{"label": "A"}, {"label": "Five", "value": 5}, "Plain"]\n'
        'SUGGESTED_ACTIONS: [{"label": "X", "action": "x", "handler": "browser"}, '
        '{"label": "Y", "action": "y", "style": "danger"}, {"action": "z"}, '
        '{"label": "Ok", "action": "ok", "style": "warning"}]'
    )
    found = extract_suggestions(text)
    assert found.text == "Ok."
    assert found.values == (
        SuggestedValue(label="Five", value="5"),
        SuggestedValue(label="Plain", value="Plain"),
    )
    assert found.actions == (SuggestedAction(label="Ok", action="ok", style="warning"),)
    assert len(found.problems) == 4
    assert any("handler" in p for p in found.problems)
    assert any("style" in p for p in found.problems)


def test_server_actions_without_a_handler_are_dropped_when_handlers_are_known() -> None:
    text = (
        'SUGGESTED_ACTIONS: [{"label": "A", "action": "apply", "handler": "server"}, '
        '{"label": "B", "action": "nuke", "handler": "server"}]'
    )
    found = extract_suggestions(text, server_actions={"apply"})
    assert [a.action for a in found.actions] == ["apply"]
    assert found.problems == ("SUGGESTED_ACTIONS: item 1 dropped: no server action 'nuke'",)


def test_text_without_markers_is_untouched() -> None:
    text = "Line with two trailing spaces  \nfor a markdown break."
    assert extract_suggestions(text).text == text


def test_instructions_mention_actions_only_when_there_are_some() -> None:
    assert "SUGGESTED_ACTIONS" not in suggestion_instructions(with_actions=False)
    assert "SUGGESTED_ACTIONS" in suggestion_instructions(with_actions=True)
