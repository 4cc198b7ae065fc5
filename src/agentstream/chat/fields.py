"""Values the user sets in the chat UI that travel with every message, in the request context.

An application declares them (``ChatConfig.context_fields``) and a chat UI renders each as a
small control: a choice among ``choices`` (a brand, a region) or, with a boolean ``default``, a
switch (search the documents or not). The value goes into the request's ``context`` under
``key``, where the prompt and the tools see it; with ``option`` it also reaches tools as
``ToolContext.options[option]`` (and so ``ChatConfig.option_scopes``).

These values come from the client: the server checks them against the declaration (an
unknown choice is a 400) but grants nothing by them. A field that names a tenant is a
preference, never an authorisation: tools keep reading the tenant the caller's token grants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentstream.runs.request import RefusedRequest

__all__ = ["ContextField", "InvalidContextValue", "check_context_fields"]


class InvalidContextValue(RefusedRequest):
    """A context field set to a value its declaration does not allow (a 400 naming it)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"context.{key}", message)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextField:
    """One value of the request context the user picks in the chat UI.

    ``ContextField(key="brandRef", label="Brand", choices=("acme", "globex"))`` is a select;
    ``ContextField(key="ragEnabled", label="Search documents", default=True,
    option="rag_enabled")`` a switch whose value tools also read as an option.
    """

    key: str
    label: str
    choices: Sequence[str] = ()
    default: str | bool | None = None
    option: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not self.key.strip() or not self.label.strip():
            raise ValueError("a context field needs a key and a label")
        if isinstance(self.choices, str):
            raise ValueError(f"context field {self.key!r}: choices is a list, not one string")
        if self.choices:
            if self.default is not None and self.default not in self.choices:
                raise ValueError(
                    f"context field {self.key!r}: default {self.default!r} is not a choice"
                )
        elif not isinstance(self.default, bool):
            raise ValueError(
                f"context field {self.key!r} needs choices, or a boolean default for a switch"
            )

    @property
    def is_switch(self) -> bool:
        return not self.choices

    def check(self, value: Any) -> None:
        """Raise :class:`InvalidContextValue` for a value the declaration does not allow."""
        if self.is_switch:
            if not isinstance(value, bool):
                raise InvalidContextValue(self.key, "expected true or false")
        elif value not in self.choices:
            raise InvalidContextValue(self.key, f"expected one of {', '.join(self.choices)}")

    def client_view(self) -> dict[str, Any]:
        view: dict[str, Any] = {
            "key": self.key,
            "label": self.label,
            "kind": "switch" if self.is_switch else "choice",
            "default": self.default if self.default is not None else self.choices[0],
        }
        if self.choices:
            view["choices"] = list(self.choices)
        if self.description:
            view["description"] = self.description
        return view


def check_context_fields(fields: Sequence[ContextField], context: object) -> Mapping[str, Any]:
    """The tool options the declared ``fields`` give for ``context``, after checking every
    value present (:class:`InvalidContextValue` names the first wrong one). Absent values are
    left out: the client may not show the control."""
    if not fields or not isinstance(context, Mapping):
        return {}
    options: dict[str, Any] = {}
    for field in fields:
        if field.key not in context or context[field.key] is None:
            continue
        value = context[field.key]
        field.check(value)
        if field.option is not None:
            options[field.option] = value
    return options
