"""The request context as the model reads it.

The workflow assistant puts the client's UI state into the system prompt after a preamble, with the
ids the model will need pulled out on lines of their own (``**Current workflow ID: `UUID`**``,
easier for a model to copy than a value buried in JSON) and the whole context as one compact JSON
block. The chat tray lets a page render its own loaded data instead of the JSON. Secret-looking keys
are redacted first: the model has no use for a token, and the prompt ends up in diagnostics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from agentstream.chat.redaction import SECRET_KEYS, Scrubber, is_secret_key, redact

__all__ = ["DEFAULT_PREAMBLE", "context_ids", "render_context"]

DEFAULT_PREAMBLE = "## Context\nThe application sent this about what the user is looking at:"

IdKeys = Sequence[str] | Mapping[str, str] | None
"""Which context keys to make prominent: key names (labels derived: ``workflow_id`` becomes
"Current workflow ID"), a mapping of key to label, or ``None`` for every top-level key ending
in ``_id`` with a scalar value."""


def context_ids(
    context: Mapping[str, Any], keys: IdKeys = None, secret_keys: AbstractSet[str] = SECRET_KEYS
) -> list[tuple[str, str]]:
    """``(label, value)`` for each id to show on its own line."""
    if keys is None:
        chosen = {k: _label(k) for k in context if isinstance(k, str) and k.endswith("_id")}
    elif isinstance(keys, Mapping):
        chosen = dict(keys)
    else:
        chosen = {k: _label(k) for k in keys}
    found: list[tuple[str, str]] = []
    for key, label in chosen.items():
        value = context.get(key)
        if (
            is_secret_key(key, secret_keys)
            or isinstance(value, bool)
            or not isinstance(value, str | int)
        ):
            continue
        if str(value).strip():
            found.append((label, str(value)))
    return found


def _label(key: str) -> str:
    stem = key[:-3] if key.endswith("_id") else key
    return f"Current {stem.replace('_', ' ')} ID".strip()


def render_context(
    context: Any,
    *,
    preamble: str = DEFAULT_PREAMBLE,
    ids: IdKeys = None,
    page_text: str | None = None,
    secret_keys: AbstractSet[str] = SECRET_KEYS,
) -> str | None:
    """The context section, or ``None`` when there is no context to show.

    ``page_text`` (a page's own rendering of its data) replaces the JSON block.
    """
    if _is_empty(context) and not page_text:
        return None
    parts = [preamble.strip()] if preamble.strip() else []
    if isinstance(context, Mapping):
        shown_ids = context_ids(context, ids, secret_keys)
        parts.extend(f"**{label}: `{value}`**" for label, value in shown_ids)
    if page_text:
        parts.append(page_text.strip())
    elif isinstance(context, str):
        parts.append(Scrubber().text(context.strip()))
    elif not _is_empty(context):
        compact = json.dumps(
            redact(context, secret_keys), separators=(",", ":"), ensure_ascii=False, default=str
        )
        parts.append(f"```json\n{Scrubber().text(compact)}\n```")
    return "\n".join(parts)


def _is_empty(context: Any) -> bool:
    if context is None:
        return True
    if isinstance(context, str | Mapping | list | tuple):
        return len(context) == 0 or (isinstance(context, str) and not context.strip())
    return False
