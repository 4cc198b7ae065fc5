"""Suggested values and actions (chat tray): quick replies and buttons the model offers.

The model ends its answer with ``SUGGESTED_VALUES: [...]`` and/or ``SUGGESTED_ACTIONS: [...]``.
:func:`extract_suggestions` removes those blocks from the message and validates each item:
a value needs ``label`` and ``value``; an action needs ``label`` and ``action``, ``handler`` is
``client`` (default) or ``server``, ``style`` is ``primary``, ``secondary`` or ``warning``.
An invalid item is dropped; a block whose JSON cannot be read stays in the text as written, so
the answer stays readable and nothing is lost. Each problem is logged as a warning and returned
(diagnostics show them); none fails the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from agentstream.chat.jsonblocks import Cut, cut, find_blocks
from agentstream.events import SuggestedAction, SuggestedValue

__all__ = [
    "ACTIONS_MARKER",
    "ACTIONS_INSTRUCTIONS",
    "VALUES_INSTRUCTIONS",
    "VALUES_MARKER",
    "Suggestions",
    "extract_suggestions",
    "suggestion_instructions",
]

log = logging.getLogger("agentstream.chat")

VALUES_MARKER = "SUGGESTED_VALUES:"
ACTIONS_MARKER = "SUGGESTED_ACTIONS:"

VALUES_INSTRUCTIONS = f"""\
When quick replies would help the user, end your answer with a line
{VALUES_MARKER} [{{"label": "Yes, proceed", "value": "yes"}}]
where `value` is the message sent when the user clicks it."""

ACTIONS_INSTRUCTIONS = f"""\
To offer one of the actions above as a button, end your answer with a line
{ACTIONS_MARKER} [{{"label": "Apply", "action": "<action>", "handler": "<client or server>", \
"data": {{}}, "style": "primary"}}]
with the action's handler as listed; `style` is "primary", "secondary" or "warning"."""


def suggestion_instructions(*, with_actions: bool) -> str:
    """How to write suggestions, for the capabilities section. Actions are explained only
    when there are actions the model may offer."""
    parts = [VALUES_INSTRUCTIONS, ACTIONS_INSTRUCTIONS] if with_actions else [VALUES_INSTRUCTIONS]
    return "\n".join(parts) + "\nWrite the JSON on one line; these lines are not shown as text."


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, str_strip_whitespace=True)

    @field_validator("label", "value", "action", check_fields=False)
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text:
            raise ValueError("must not be empty")
        return text


class _Value(_Item):
    label: str
    value: str


class _Action(_Item):
    label: str
    action: str
    handler: Literal["client", "server"] = "client"
    data: Any = None
    style: Literal["primary", "secondary", "warning"] | None = None


Reader = Callable[[Any], SuggestedValue | SuggestedAction]


@dataclass(frozen=True, slots=True, kw_only=True)
class Suggestions:
    text: str
    """The message without the suggestion blocks that were read (the rest exactly as
    written)."""
    values: tuple[SuggestedValue, ...] = ()
    actions: tuple[SuggestedAction, ...] = ()
    problems: tuple[str, ...] = ()
    cut: Cut | None = None
    """Where each position of the message went in :attr:`text`."""


def extract_suggestions(text: str, *, server_actions: Container[str] | None = None) -> Suggestions:
    """Read and remove the suggestion blocks in ``text``.

    When ``server_actions`` is given, a suggested server action not in it is dropped: the
    button would only produce an error when clicked.
    """
    problems: list[str] = []
    spans: list[tuple[int, int]] = []
    values: list[SuggestedValue] = []
    actions: list[SuggestedAction] = []
    readers: tuple[tuple[str, Reader], ...] = (
        (VALUES_MARKER, _read_value),
        (ACTIONS_MARKER, _read_action),
    )
    for marker, read in readers:
        for block in find_blocks(text, marker):
            if block.error is not None:
                problems.append(f"{marker} ignored: {block.error}; the text was left as written")
                continue
            spans.append((block.start, block.end))
            items = block.value if isinstance(block.value, list) else [block.value]
            for position, item in enumerate(items):
                try:
                    parsed = read(item)
                except (ValidationError, ValueError) as exc:
                    problems.append(f"{marker} item {position} dropped: {_reason(exc)}")
                    continue
                if isinstance(parsed, SuggestedValue):
                    values.append(parsed)
                elif (
                    parsed.handler == "server"
                    and server_actions is not None
                    and parsed.action not in server_actions
                ):
                    problems.append(
                        f"{marker} item {position} dropped: no server action {parsed.action!r}"
                    )
                else:
                    actions.append(parsed)
    for problem in problems:
        log.warning("suggestions: %s", problem)
    cleaned = cut(text, spans)
    return Suggestions(
        text=cleaned.text,
        values=tuple(values),
        actions=tuple(actions),
        problems=tuple(problems),
        cut=cleaned,
    )


def _read_value(item: Any) -> SuggestedValue:
    if isinstance(item, str):  # a bare string is its own label
        item = {"label": item, "value": item}
    parsed = _Value.model_validate(item)
    return SuggestedValue(label=parsed.label, value=parsed.value)


def _read_action(item: Any) -> SuggestedAction:
    parsed = _Action.model_validate(item)
    return SuggestedAction(
        label=parsed.label,
        action=parsed.action,
        handler=parsed.handler,
        data=parsed.data,
        style=parsed.style,
    )


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'item'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
    return str(exc)
