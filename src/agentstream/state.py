"""Shared state: one JSON object that a page and the agent both read and write.

A page sends its state with a message; the run starts from it (or from the state its
conversation has stored), its tools read it as ``ctx.state`` and change it in place, and each
call's changes go out as a JSON Patch (RFC 6902) in a ``state_delta`` event, after a
``state_snapshot`` at the start of the run. The store applies the same patches to the state it
keeps with the conversation, so a reload or a second tab starts from the latest.

Tools change a plain ``dict`` rather than write patches: a tool says what the state should
be (``ctx.state["filters"]["year_from"] = 2020``) and :func:`diff` derives the smallest patch
from its copy, the same way for sync and async tools, with nothing to get out of order. A
patch is applied whole or not at all (:func:`apply_patch`), as RFC 6902 asks.

What a page may send is checked once, here (:func:`check_state`): a JSON object, at most
:data:`STATE_LIMIT_BYTES` of JSON. A tool's change that would break either rule is refused
the same way and the run says so in a warning; the state stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_json

__all__ = [
    "STATE_LIMIT_BYTES",
    "InvalidState",
    "PatchConflict",
    "apply_patch",
    "check_state",
    "copy_json",
    "diff",
]

STATE_LIMIT_BYTES = 64 * 1024
"""The largest state, as compact UTF-8 JSON: state travels with every message and in every
run's first event, so it holds what a page and an agent agree on (filters, a selection, a
draft), not documents."""


class InvalidState(ValueError):
    """A state that is not a JSON object, or is larger than :data:`STATE_LIMIT_BYTES`.
    ``too_large`` tells the two apart (a server answers 413 for one, 400 for the other)."""

    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


class PatchConflict(ValueError):
    """A patch that does not apply to the state (a path it removes or replaces is gone, a
    ``test`` that fails): nothing of it was applied."""


def check_state(value: Any, *, limit: int = STATE_LIMIT_BYTES) -> dict[str, Any]:
    """``value`` if it is a JSON object within ``limit`` bytes, else :class:`InvalidState`
    saying what is wrong."""
    if not isinstance(value, dict):
        kind = "an array" if isinstance(value, list) else type(value).__name__
        raise InvalidState(f"state must be a JSON object, not {kind}")
    try:
        size = len(json.dumps(value, separators=(",", ":"), allow_nan=False).encode())
    except (TypeError, ValueError) as exc:
        raise InvalidState(
            f"state must be JSON (objects, arrays, strings, numbers): {exc}"
        ) from None
    if not _string_keys(value):
        raise InvalidState("state must be JSON: every key of an object is a string")
    if size > limit:
        raise InvalidState(
            f"state is {size:,} bytes of JSON; at most {limit:,} are kept", too_large=True
        )
    return value


def copy_json(value: Any) -> Any:
    """A deep copy of JSON data (objects and arrays copied, the rest shared: strings and
    numbers do not change). Several times faster than :func:`copy.deepcopy`, which keeps a
    memo for shared and cyclic objects that JSON cannot have."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


# --- deriving a patch -------------------------------------------------------------------------


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON Patch that turns ``before`` into ``after``: objects are compared key by key
    (so a change to one key says nothing about its neighbours); arrays and values that
    differ are replaced whole. Empty when they are equal. :class:`InvalidState` for an
    object key that is not a string (JSON has none)."""
    ops: list[dict[str, Any]] = []
    _diff_objects(before, after, "", ops)
    return ops


def _diff_objects(
    before: Mapping[str, Any], after: Mapping[str, Any], path: str, ops: list[dict[str, Any]]
) -> None:
    for key in before:
        if key not in after:
            ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
    for key, value in after.items():
        if not isinstance(key, str):
            raise InvalidState(
                f"state must be JSON: the key {key!r} at {path or '/'} is not a string"
            )
        where = f"{path}/{_escape(key)}"
        if key not in before:
            ops.append({"op": "add", "path": where, "value": copy_json(value)})
            continue
        old = before[key]
        if isinstance(old, dict) and isinstance(value, dict):
            _diff_objects(old, value, where, ops)
        elif not _same(old, value):
            ops.append({"op": "replace", "path": where, "value": copy_json(value)})


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``True`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        # Python's own comparison first (it runs in C, and most arrays a call leaves alone
        # are equal); then their JSON, which tells ``true`` from ``1`` where ``==`` cannot.
        return len(a) == len(b) and a == b and to_json(a) == to_json(b)
    return bool(a == b)


# --- applying a patch -------------------------------------------------------------------------


def apply_patch(state: Mapping[str, Any], patch: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``state`` with ``patch`` applied (a new object; ``state`` is not changed). Every
    RFC 6902 operation is understood; :class:`PatchConflict` when one does not apply, and
    then nothing is.

    Only the objects and arrays on the paths the patch changes are copied; the rest of the
    new state is shared with ``state``. So neither may be changed in place afterwards:
    treat a state as a value (the loop and the store replace theirs, never edit it)."""
    document: Any = dict(state)
    for position, op in enumerate(patch):
        try:
            document = _apply(document, op)
        except PatchConflict as exc:
            raise PatchConflict(f"operation {position} ({op.get('op')}): {exc}") from None
    if not isinstance(document, dict):
        raise PatchConflict("the patch replaces the state with something other than an object")
    return document


def _apply(document: Any, op: Mapping[str, Any]) -> Any:
    kind, path = op.get("op"), op.get("path")
    if not isinstance(path, str):
        raise PatchConflict("path must be a JSON Pointer string")
    match kind:
        case "add":
            return _add(document, path, copy_json(_value(op)))
        case "remove":
            return _remove(document, path)[0]
        case "replace":
            document, _ = _remove(document, path)
            return _add(document, path, copy_json(_value(op)))
        case "move" | "copy":
            source = op.get("from")
            if not isinstance(source, str):
                raise PatchConflict("from must be a JSON Pointer string")
            if kind == "move":
                if path.startswith(source + "/"):
                    raise PatchConflict("a value cannot move into itself")
                document, value = _remove(document, source)
            else:
                value = copy_json(_get(document, source))
            return _add(document, path, value)
        case "test":
            if not _same(_get(document, path), _value(op)):
                raise PatchConflict(f"{path} does not hold the value tested")
            return document
        case _:
            raise PatchConflict(f"unknown operation {kind!r}")


def _value(op: Mapping[str, Any]) -> Any:
    if "value" not in op:
        raise PatchConflict("value is missing")
    return op["value"]


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchConflict(f"{path!r} is not a JSON Pointer")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _index(container: list[Any], token: str, *, end_ok: bool) -> int:
    if end_ok and token == "-":
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchConflict(f"{token!r} is not an array index")
    index = int(token)
    if index > len(container) or (index == len(container) and not end_ok):
        raise PatchConflict(f"index {index} is past the array's end")
    return index


def _parent(document: Any, tokens: list[str], *, changing: bool = False) -> Any:
    """The container ``tokens`` lead to. ``changing``: each object and array on the way is
    replaced by a copy of itself first (``document`` is a copy already), so what the patch
    changes is never an object the state it started from still holds."""
    node = document
    for token in tokens:
        if isinstance(node, dict):
            if token not in node:
                raise PatchConflict(f"/{'/'.join(tokens)} does not exist")
            key: Any = token
        elif isinstance(node, list):
            key = _index(node, token, end_ok=False)
        else:
            raise PatchConflict(f"/{'/'.join(tokens)} is not an object or array")
        child = node[key]
        if changing and isinstance(child, dict | list):
            child = node[key] = child.copy()
        node = child
    return node


def _get(document: Any, path: str) -> Any:
    tokens = _tokens(path)
    if not tokens:
        return document
    parent = _parent(document, tokens[:-1])
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchConflict(f"{path} does not exist")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, end_ok=False)]
    raise PatchConflict(f"{path} is inside a value that is not an object or array")


def _add(document: Any, path: str, value: Any) -> Any:
    tokens = _tokens(path)
    if not tokens:
        return value
    parent, last = _parent(document, tokens[:-1], changing=True), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, end_ok=True), value)
    else:
        raise PatchConflict(f"{path} is inside a value that is not an object or array")
    return document


def _remove(document: Any, path: str) -> tuple[Any, Any]:
    tokens = _tokens(path)
    if not tokens:
        return None, document
    parent, last = _parent(document, tokens[:-1], changing=True), tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchConflict(f"{path} does not exist")
        return document, parent.pop(last)
    if isinstance(parent, list):
        return document, parent.pop(_index(parent, last, end_ok=False))
    raise PatchConflict(f"{path} is inside a value that is not an object or array")


def _string_keys(value: Any) -> bool:
    """Every object key is a string (``json.dumps`` would quietly turn ``1`` into ``"1"``,
    and the state read back would differ from the state written)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _string_keys(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_string_keys(v) for v in value)
    return True
