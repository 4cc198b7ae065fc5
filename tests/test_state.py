"""JSON Patch as :mod:`agentstream.state` derives and applies it (RFC 6902), and what a state
must be."""

from __future__ import annotations

from typing import Any

import pytest

from agentstream.state import (
    STATE_LIMIT_BYTES,
    InvalidState,
    PatchConflict,
    apply_patch,
    check_state,
    diff,
)

PAIRS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {}),
    ({}, {"a": 1}),
    ({"a": 1}, {}),
    ({"a": 1}, {"a": 1.0}),
    ({"a": 1}, {"a": True}),
    ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2, 3]}}),
    ({"a/b": 1, "c~d": 2}, {"a/b": 3, "c~d": 2, "e": None}),
    ({"deep": {"x": {"y": 1}, "z": 2}}, {"deep": {"x": {"y": 2}}, "n": [{"k": "v"}]}),
]


@pytest.mark.parametrize(("before", "after"), PAIRS)
def test_a_derived_patch_turns_one_state_into_the_other(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    patch = diff(before, after)
    assert apply_patch(before, patch) == after
    assert (patch == []) == (before == after and _types(before) == _types(after))


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value) if isinstance(value, bool) else value


def test_a_change_to_one_key_says_nothing_of_its_neighbours() -> None:
    before = {"filters": {"year": 2010, "journal": "Nature"}, "view": "list"}
    after = {"filters": {"year": 2020, "journal": "Nature"}, "view": "list"}
    assert diff(before, after) == [{"op": "replace", "path": "/filters/year", "value": 2020}]
    assert diff({"a/b": 1}, {}) == [{"op": "remove", "path": "/a~1b"}]


def test_every_rfc_6902_operation_applies() -> None:
    state = {"list": [1, 2], "obj": {"k": "v"}}
    patch = [
        {"op": "add", "path": "/list/-", "value": 3},
        {"op": "add", "path": "/list/0", "value": 0},
        {"op": "test", "path": "/list", "value": [0, 1, 2, 3]},
        {"op": "move", "from": "/obj/k", "path": "/moved"},
        {"op": "copy", "from": "/moved", "path": "/copied"},
        {"op": "replace", "path": "/list/1", "value": "one"},
        {"op": "remove", "path": "/list/2"},
    ]
    assert apply_patch(state, patch) == {
        "list": [0, "one", 3],
        "obj": {},
        "moved": "v",
        "copied": "v",
    }
    assert state == {"list": [1, 2], "obj": {"k": "v"}}  # not changed in place


@pytest.mark.parametrize(
    "op",
    [
        {"op": "remove", "path": "/missing"},
        {"op": "replace", "path": "/a/b", "value": 1},
        {"op": "test", "path": "/a", "value": 2},
        {"op": "add", "path": "/list/5", "value": 1},
        {"op": "add", "path": "/list/01", "value": 1},
        {"op": "move", "from": "/a", "path": "/a/inner"},
        {"op": "add", "path": "", "value": [1]},
        {"op": "jump", "path": "/a"},
        {"op": "add", "path": "/b"},
    ],
)
def test_a_patch_that_does_not_apply_changes_nothing(op: dict[str, Any]) -> None:
    state = {"a": 1, "list": [1]}
    with pytest.raises(PatchConflict):
        apply_patch(state, [{"op": "add", "path": "/new", "value": 1}, op])
    assert state == {"a": 1, "list": [1]}


@pytest.mark.parametrize(
    ("value", "too_large"),
    [
        ([], False),
        ("x", False),
        (None, False),
        ({"when": object()}, False),
        ({"n": float("nan")}, False),
        ({1: "int key"}, False),
        ({"x": "y" * STATE_LIMIT_BYTES}, True),
    ],
)
def test_what_is_not_a_state_says_why(value: Any, too_large: bool) -> None:
    with pytest.raises(InvalidState) as raised:
        check_state(value)
    assert raised.value.too_large is too_large


def test_a_state_at_the_limit_is_kept() -> None:
    value = {"x": "y" * (STATE_LIMIT_BYTES - len('{"x":""}'))}
    assert check_state(value) is value
