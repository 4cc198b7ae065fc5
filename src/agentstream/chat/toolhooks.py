"""Reusable tool hooks for the workflow assistant's patterns, for ``@tool(prepare=...,
summarize=..., intercept=...)``.

- :func:`inject_from_context`: fill an argument the model left out from the request context
  (e.g. the current ``workflow_id``): with ``uuid_only`` a valid UUID the model gave is kept
  (it may mean another workflow) and a missing or non-UUID value (a rule name) is replaced.
- :func:`keep_fields`, :func:`first_sentence`, :func:`field_names`, :func:`names_of`: shrink
  results before the model reads them, e.g.
  ``keep_fields("id", "name", "entity_name", "trigger_type", "is_active", under="rules")``.
- :func:`preview_interceptor`: turn a validated result into a client payload (the workflow
  assistant's ``workflow_preview``) and tell the model only that the preview was sent.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from agentstream.events import Payload
from agentstream.tools import ToolContext, ToolResult

__all__ = [
    "PREVIEW_SENT",
    "field_names",
    "first_sentence",
    "inject_from_context",
    "is_uuid",
    "keep_fields",
    "names_of",
    "preview_interceptor",
    "workflow_preview_data",
]

PREVIEW_SENT = {
    "status": "preview_sent",
    "message": "Preview sent to user for approval. Do not call create_workflow or "
    "update_workflow; wait for the user's decision.",
}
"""The workflow assistant's synthetic result for a preview tool."""


def is_uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def inject_from_context(
    key: str, *, context_key: str | None = None, uuid_only: bool = False
) -> Callable[[dict[str, Any], ToolContext], dict[str, Any]]:
    """A ``prepare`` hook setting ``arguments[key]`` from ``ctx.context[context_key or key]``
    when the model left it out (or, with ``uuid_only``, gave something that is not a UUID).
    Without a value in the context the arguments are left as the model wrote them."""
    source = context_key or key

    def prepare(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        given = arguments.get(key)
        keep = is_uuid(given) if uuid_only else given not in (None, "")
        if keep:
            return arguments
        context = ctx.context
        value = context.get(source) if isinstance(context, Mapping) else None
        if value in (None, "") or (uuid_only and not is_uuid(value)):
            return arguments
        return {**arguments, key: value}

    return prepare


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: Any, max_chars: int = 200) -> Any:
    """The first sentence of a description, at most ``max_chars`` long (non-strings as-is)."""
    if not isinstance(text, str):
        return text
    flat = " ".join(text.split())
    sentence = _SENTENCE_END.split(flat, maxsplit=1)[0]
    if len(sentence) > max_chars:
        sentence = sentence[: max_chars - 1].rstrip() + "…"
    return sentence


def field_names(schema: Any) -> Any:
    """A JSON Schema or config object reduced to its field names."""
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            return list(properties)
        return list(schema)
    if isinstance(schema, list):
        return [names_of(item) for item in schema]
    return schema


def names_of(items: Any) -> Any:
    """Objects reduced to their ``name`` (ports, recipients); other values as-is."""
    if isinstance(items, list):
        return [names_of(item) for item in items]
    if isinstance(items, Mapping):
        for key in ("name", "label", "id"):
            if key in items:
                return items[key]
    return items


def keep_fields(
    *fields: str,
    under: str | None = None,
    transform: Mapping[str, Callable[[Any], Any]] | None = None,
) -> Callable[[Any], Any]:
    """A ``summarize`` hook keeping only ``fields`` of each object in a result (a list of
    objects, one object, or a list under the key ``under``), optionally transforming some."""
    changes = dict(transform or {})

    def shrink(item: Any) -> Any:
        if not isinstance(item, Mapping):
            return item
        return {f: changes.get(f, _same)(item[f]) for f in fields if f in item}

    def summarize(result: Any) -> Any:
        if (
            under is not None
            and isinstance(result, Mapping)
            and isinstance(result.get(under), list)
        ):
            return {**result, under: [shrink(item) for item in result[under]]}
        if isinstance(result, list):
            return [shrink(item) for item in result]
        return shrink(result)

    return summarize


def _same(value: Any) -> Any:
    return value


PreviewBuilder = Callable[[Any, dict[str, Any]], Any]


def workflow_preview_data(result: Any, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The ``workflow_preview`` payload from a validation result and the tool's arguments;
    ``None`` when validation failed (the model then sees the errors and can fix them). A
    result carrying ``workflow`` or ``workflow_id`` (resolved by the tool) is preferred to the
    arguments."""
    validated: Mapping[str, Any] = result if isinstance(result, Mapping) else {}
    if validated.get("error") or validated.get("valid") is False:
        return None
    # What the backend validated (names resolved to ids, edges expanded) wins over the
    # arguments as the model wrote them.
    workflow = validated.get("workflow", arguments.get("workflow"))
    workflow_id = validated.get("workflow_id") or arguments.get("workflow_id")
    data: dict[str, Any] = {
        "description": arguments.get("description", ""),
        "workflow": workflow,
        "is_update": bool(workflow_id),
    }
    if workflow_id:
        data["workflow_id"] = workflow_id
    return data


def preview_interceptor(
    kind: str = "workflow_preview",
    build: PreviewBuilder = workflow_preview_data,
    *,
    result: Mapping[str, Any] = PREVIEW_SENT,
    summary: Callable[[Any], str] | None = None,
) -> Callable[[Any, dict[str, Any], ToolContext], ToolResult | None]:
    """An ``intercept`` hook: when ``build(result, arguments)`` gives data (the result
    validated), the client gets a ``kind`` payload and the model gets ``result``; otherwise the
    tool's own result goes to the model unchanged."""
    text = json.dumps(dict(result))

    def intercept(value: Any, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
        data = build(value, arguments)
        if data is None:
            return None
        described = summary(data) if summary is not None else _preview_summary(kind, data)
        return ToolResult(
            text=text, payload=Payload(kind=kind, data=data, summary=described), output=value
        )

    return intercept


def _preview_summary(kind: str, data: Any) -> str:
    title = kind.replace("_", " ").capitalize()
    description = data.get("description") if isinstance(data, Mapping) else None
    return f"{title}: {description}" if description else title
