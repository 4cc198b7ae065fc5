"""Payload types: structured data for the client, from tools or the model.

A ``source="tool"`` payload comes from a tool's :class:`~agentstream.tools.ToolResult` (the loop
streams it as a ``payload`` event). A ``source="llm"`` payload is written by the model into its
answer after a marker (``SCHEMA_PROPOSAL: {...}``); :meth:`PayloadTypes.extract` finds it,
runs the type's ``parser`` (validate or reshape; raise ``ValueError`` to reject) and removes it
from the message. The capabilities section of the prompt tells the model each type's
``llm_instructions``.

Types are global (every page) or declared by a page, tab or subtab. Every payload gets an id and
a one-line summary, which the payload manifest of later prompts lists so the model can refer to
earlier payloads ("the schema you proposed, abc12345").

A type also says how a client shows it: a ``title``, a ``view`` (:class:`GraphView` draws nodes
and labelled edges, :class:`TableView` rows and columns; without one, the summary and the
data) and the ``actions`` its card offers (:class:`PayloadAction`: an Approve button that runs
a server action with the payload). :meth:`PayloadType.client_view` is what the web UI reads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import ValidationError
from typing_extensions import TypedDict

from agentstream.chat.jsonblocks import Cut, cut, find_blocks
from agentstream.events import Payload
from agentstream.ids import new_payload_id

__all__ = [
    "ExtractedPayloads",
    "GraphView",
    "PayloadAction",
    "PayloadType",
    "TableView",
    "PayloadTypes",
    "default_summary",
    "describe_payload_types",
    "new_payload_id",
    "payload_manifest",
]

log = logging.getLogger("agentstream.chat")

_SUMMARY_LENGTH = 100
_SUMMARY_KEYS = ("title", "name", "query", "description", "summary", "label")


ActionStyle = Literal["primary", "secondary", "warning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PayloadAction:
    """A button on a payload's card.

    ``handler="server"`` sends the action back like a suggested server action
    (``interaction_type: "action_executed"``) with ``data`` ``{"payload_id": ..., "payload":
    <the payload's data>}``; register its handler in ``ChatConfig.server_actions`` and validate
    the data there (it comes from the client). ``handler="client"`` is run by the page (the
    web UI dispatches its cancelable ``agentstream:action`` event with the same data).
    """

    label: str
    action: str
    handler: Literal["server", "client"] = "server"
    style: ActionStyle | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not self.label.strip() or not self.action.strip():
            raise ValueError("a payload action needs a label and an action name")

    def client_view(self) -> dict[str, Any]:
        view: dict[str, Any] = {"label": self.label, "action": self.action}
        view["handler"] = self.handler
        if self.style is not None:
            view["style"] = self.style
        if self.description:
            view["description"] = self.description
        return view


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphView:
    """Draw a payload as a graph: the list at ``nodes`` (a dotted path into the payload's
    data) as boxes, the list at ``edges`` as arrows between them labelled with
    ``edge_label``. An edge without a source starts at a "Start" node. For a workflow:
    ``GraphView(nodes="workflow.actions", edges="workflow.edges", node_id="name",
    node_detail="action_type", edge_source="source_action", edge_target="target_action",
    edge_label="source_output")``."""

    nodes: str
    edges: str
    node_id: str = "id"
    node_label: str = "name"
    node_detail: str | None = None
    edge_source: str = "source"
    edge_target: str = "target"
    edge_label: str | None = "label"

    def client_view(self) -> dict[str, Any]:
        return {"kind": "graph", **{k: getattr(self, k) for k in self.__dataclass_fields__}}


@dataclass(frozen=True, slots=True, kw_only=True)
class TableView:
    """Show a payload as a table: the list at ``rows`` (a dotted path; ``""`` is the data
    itself), one column per ``columns`` entry (``(key, heading)``; empty: every key of the
    first row)."""

    rows: str = ""
    columns: Sequence[tuple[str, str]] = ()

    def client_view(self) -> dict[str, Any]:
        return {
            "kind": "table",
            "rows": self.rows,
            "columns": [{"key": key, "label": label} for key, label in self.columns],
        }


class PayloadTypeView(TypedDict):
    """How a client shows a payload type (``GET /api/chat/config``)."""

    name: str
    title: str
    description: str
    view: dict[str, Any] | None
    actions: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class PayloadType:
    """A kind of structured data for the client, from a tool or written by the model.

    Use :meth:`llm` and :meth:`tool` rather than the constructor: they take only what applies."""

    name: str
    source: Literal["tool", "llm"]
    description: str = ""
    marker: str | None = None
    """``source="llm"``: the text that introduces the JSON (default ``NAME:``)."""
    parser: Callable[[Any], Any] | None = None
    """``source="llm"``: validates or reshapes the parsed JSON; raise ``ValueError`` (or a
    pydantic ``ValidationError``) to reject it."""
    llm_instructions: str | None = None
    """``source="llm"``: when and how the model should produce this payload."""
    summarize: Callable[[Any], str] | None = None
    """A one-line summary of a payload's data (default: :func:`default_summary`)."""
    is_global: bool = True
    """Available on every page; otherwise only where a page, tab or subtab declares it."""
    title: str | None = None
    """The heading of its card (default: the name, humanised)."""
    view: GraphView | TableView | None = None
    """How a client draws the data (default: the summary, with the data on demand)."""
    actions: Sequence[PayloadAction] = ()
    """The buttons its card offers."""

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a payload type needs a name")
        if self.source == "llm" and self.marker is None:
            object.__setattr__(self, "marker", f"{self.name.upper()}:")
        names = [a.action for a in self.actions]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"payload type {self.name!r} declares action(s) twice: {duplicates}")

    def client_view(self) -> PayloadTypeView:
        """What a client needs to draw this type's cards."""
        return {
            "name": self.name,
            "title": self.title or self.name.replace("_", " ").strip().capitalize(),
            "description": self.description,
            "view": self.view.client_view() if self.view is not None else None,
            "actions": [a.client_view() for a in self.actions],
        }

    @classmethod
    def llm(
        cls,
        name: str,
        *,
        instructions: str,
        marker: str | None = None,
        parser: Callable[[Any], Any] | None = None,
        summarize: Callable[[Any], str] | None = None,
        description: str = "",
        is_global: bool = True,
        title: str | None = None,
        view: GraphView | TableView | None = None,
        actions: Sequence[PayloadAction] = (),
    ) -> PayloadType:
        """A payload the model writes after its marker.

        For example::

            PayloadType.llm(
                "schema_proposal",
                instructions='To propose fields, end with SCHEMA_PROPOSAL: {"fields": [...]}',
                parser=lambda data: Proposal.model_validate(data).model_dump(),
                actions=[PayloadAction(label="Apply", action="apply_schema")],
            )
        """
        return cls(
            name=name,
            source="llm",
            marker=marker,
            parser=parser,
            llm_instructions=instructions,
            summarize=summarize,
            description=description,
            is_global=is_global,
            title=title,
            view=view,
            actions=tuple(actions),
        )

    @classmethod
    def tool(
        cls,
        name: str,
        *,
        summarize: Callable[[Any], str] | None = None,
        description: str = "",
        is_global: bool = True,
        title: str | None = None,
        view: GraphView | TableView | None = None,
        actions: Sequence[PayloadAction] = (),
    ) -> PayloadType:
        """A payload a tool returns (``ToolResult(payload=Payload(kind=name, ...))``), declared
        so clients know how to draw it and which buttons its card has."""
        return cls(
            name=name,
            source="tool",
            summarize=summarize,
            description=description,
            is_global=is_global,
            title=title,
            view=view,
            actions=tuple(actions),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractedPayloads:
    text: str
    """The message without the payload blocks that were read (the rest exactly as
    written)."""
    payloads: tuple[Payload, ...] = ()
    problems: tuple[str, ...] = ()
    cut: Cut | None = None
    """Where each position of the message went in :attr:`text`."""


class PayloadTypes:
    """The registry of payload types."""

    def __init__(self, types: Iterable[PayloadType] = ()) -> None:
        self._types: dict[str, PayloadType] = {}
        for t in types:
            self.add(t)

    def add(self, payload_type: PayloadType) -> None:
        self._types[payload_type.name] = payload_type

    def get(self, name: str) -> PayloadType | None:
        return self._types.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def __iter__(self) -> Iterator[PayloadType]:
        return iter(self._types.values())

    def available(self, declared: Sequence[str] = ()) -> list[PayloadType]:
        """The global types, then the ones a page declares."""
        chosen = {n: t for n, t in self._types.items() if t.is_global}
        for name in declared:
            found = self._types.get(name)
            if found is not None:
                chosen.setdefault(name, found)
        return list(chosen.values())

    def extract(self, text: str, types: Iterable[PayloadType]) -> ExtractedPayloads:
        """Read and remove the LLM payloads of ``types`` from ``text``, in text order.

        A block that is not valid JSON, or that the type's parser rejects, stays in the text
        and is reported in ``problems``.
        """
        found: list[tuple[int, Payload]] = []
        spans: list[tuple[int, int]] = []
        problems: list[str] = []
        for payload_type in types:
            if payload_type.source != "llm" or not payload_type.marker:
                continue
            for block in find_blocks(text, payload_type.marker):
                if block.error is not None:
                    problems.append(f"{block.marker} ignored: {block.error}")
                    continue
                try:
                    data = (
                        payload_type.parser(block.value)
                        if payload_type.parser is not None
                        else block.value
                    )
                except (ValidationError, ValueError, TypeError) as exc:
                    problems.append(f"{block.marker} rejected by its parser: {exc}")
                    continue
                except Exception:  # a bug in the application's parser must not fail the run
                    log.exception("the parser of payload type %r failed", payload_type.name)
                    problems.append(f"{block.marker} ignored: its parser failed")
                    continue
                spans.append((block.start, block.end))
                found.append(
                    (block.start, self.complete(Payload(kind=payload_type.name, data=data)))
                )
        for problem in problems:
            log.warning("payloads: %s; the text was left as written", problem)
        cleaned = cut(text, spans)
        ordered = tuple(payload for _, payload in sorted(found, key=lambda item: item[0]))
        return ExtractedPayloads(
            text=cleaned.text, payloads=ordered, problems=tuple(problems), cut=cleaned
        )

    def complete(self, payload: Payload) -> Payload:
        """``payload`` with an id and a summary (kept when it has them)."""
        if payload.payload_id is not None and payload.summary is not None:
            return payload
        summary = payload.summary
        if summary is None:
            payload_type = self._types.get(payload.kind)
            summarize = payload_type.summarize if payload_type is not None else None
            summary = default_summary(payload.kind, payload.data)
            if summarize is not None:
                try:
                    summary = _one_line(summarize(payload.data))
                except Exception:  # keep the default summary rather than lose the payload
                    log.exception("the summary of payload type %r failed", payload.kind)
        return replace(payload, summary=summary, payload_id=payload.payload_id or new_payload_id())


def default_summary(kind: str, data: Any) -> str:
    """``"Query suggestion: CRISPR gene editing"``: the type's name and the data's most
    telling string."""
    title = kind.replace("_", " ").strip().capitalize() or "Payload"
    hint: str | None = None
    if isinstance(data, dict):
        hint = next((data[k] for k in _SUMMARY_KEYS if isinstance(data.get(k), str)), None)
        if hint is None:
            hint = next((v for v in data.values() if isinstance(v, str) and v), None)
        if hint is None:
            hint = ", ".join(str(k) for k in list(data)[:5])
    elif isinstance(data, list):
        hint = f"{len(data)} item{'s' if len(data) != 1 else ''}"
    elif data is not None:
        hint = data if isinstance(data, str) else json.dumps(data, default=str)
    return _one_line(f"{title}: {hint}" if hint else title)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    if len(line) > _SUMMARY_LENGTH:
        line = line[: _SUMMARY_LENGTH - 1].rstrip() + "…"
    return line


def describe_payload_types(types: Iterable[PayloadType]) -> str | None:
    """The capabilities paragraph telling the model which payloads it may write, and how."""
    lines: list[str] = []
    for t in types:
        if t.source != "llm":
            continue
        head = f"- `{t.name}`" + (f": {t.description}" if t.description else "")
        lines.append(head)
        if t.llm_instructions:
            lines.extend(f"  {line}" for line in t.llm_instructions.strip().splitlines())
        lines.append(f"  Format: `{t.marker} {{...}}`, the JSON on one line.")
    if not lines:
        return None
    return "Structured payloads you can produce (the user sees them rendered, not as text):\n" + (
        "\n".join(lines)
    )


def payload_manifest(payloads: Sequence[Payload]) -> str | None:
    """The payload manifest: earlier payloads in this conversation, one line each. Payloads
    without an id cannot be referred to and are left out, as is the tool history (the tray's
    ``custom_payload`` for tool cards, not something the model produced)."""
    lines = [
        f"- `{p.payload_id}` {p.kind}: {p.summary or default_summary(p.kind, p.data)}"
        for p in {p.payload_id: p for p in payloads if p.payload_id}.values()
        if p.kind != "tool_history"
    ]
    if not lines:
        return None
    return (
        "Earlier in this conversation you produced these payloads; the user can see them. "
        "Refer to one by its id when it helps.\n" + "\n".join(lines)
    )
