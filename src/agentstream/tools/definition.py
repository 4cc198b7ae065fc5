"""Declaring tools: ``@tool`` on a typed function, or :meth:`Tool.from_schema`.

``@tool`` reads the signature and the docstring: the first paragraph becomes the description,
an ``Args:`` section (Google style) describes each parameter, and the type hints become a
pydantic model that is both the JSON Schema the model sees and the validator the model's
arguments must pass. A first parameter annotated :class:`ToolContext` is supplied by the loop
and hidden from the model.

Hooks let an application adapt a tool without special cases in the loop:
``prepare`` rewrites arguments before validation (auto-injecting ``workflow_id``), ``summarize``
shrinks a result before the model sees it, and ``intercept`` turns a successful result into a
client payload plus a synthetic result for the model (the workflow assistant's preview tools).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, get_type_hints, overload

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agentstream.errors import InvalidArguments
from agentstream.messages import ToolCall
from agentstream.tools.context import ToolContext
from agentstream.tools.results import ToolResult
from agentstream.tools.views import LOCAL_SOURCE, ToolView, View, Visibility

__all__ = ["InvalidArguments", "Tool", "tool"]

Prepare = Callable[[dict[str, Any], ToolContext], dict[str, Any]]
Summarize = Callable[[Any], Any]
Intercept = Callable[[Any, dict[str, Any], ToolContext], ToolResult | None]
Display = Callable[[dict[str, Any]], str | None]
ApprovalPolicy = bool | Callable[[ToolCall], bool]
"""``True`` when every call needs a person's approval, or a function of the call (its
arguments as the model sent them, after ``prepare``) that says whether this one does."""


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool the model may call: its schema, the function, and the hooks that adapt it.

    Made by :func:`tool` from a typed function, or by :meth:`from_schema`; frozen, so one
    definition can be shared by every run and copied with :meth:`with_hooks`."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any]
    takes_context: bool = False
    timeout: float | None = None
    """Seconds; ``None`` uses the agent's default."""
    prepare: Prepare | None = None
    summarize: Summarize | None = None
    intercept: Intercept | None = None
    display: Display | None = None
    """Friendly text for clients while the tool runs (the ops agent's ``tool_start.display``)."""
    requires_approval: ApprovalPolicy = False
    """Whether a call waits for a person's approval before it runs (see
    :mod:`agentstream.pending`)."""
    view: ToolView | None = None
    """The interactive view the result is drawn with (:mod:`agentstream.tools.views`)."""
    visibility: tuple[Visibility, ...] = ("model",)
    """Who may call it: the model, and (with ``"app"``) a view of the same source, as the
    user who sees the view. A Python tool is callable from a view only when it says so; an
    MCP server's tools say it in ``_meta.ui.visibility``."""
    idempotent: bool = False
    """Running a call twice does no more than running it once (a lookup, a read, a write keyed
    by the call). A call that was running when its worker died is run again by the worker
    that takes the run over only if its tool says so; any other gets an "interrupted, not run
    again" result (see ``docs/guides/durable-runs.md``)."""
    validate: Callable[[dict[str, Any]], dict[str, Any]] = field(repr=False)

    def with_hooks(
        self,
        *,
        prepare: Prepare | None = None,
        summarize: Summarize | None = None,
        intercept: Intercept | None = None,
        display: Display | None = None,
    ) -> Tool:
        """A copy with hooks set; hooks not given are kept."""
        return replace(
            self,
            prepare=prepare or self.prepare,
            summarize=summarize or self.summarize,
            intercept=intercept or self.intercept,
            display=display or self.display,
        )

    def needs_approval(self, call: ToolCall) -> bool:
        """Whether ``call`` must wait for a person's approval before it runs."""
        policy = self.requires_approval
        return policy(call) if callable(policy) else policy

    @classmethod
    def from_schema(
        cls,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        function: Callable[..., Any],
        takes_context: bool = False,
        timeout: float | None = None,
        requires_approval: ApprovalPolicy = False,
        view: ToolView | None = None,
        visibility: tuple[Visibility, ...] = ("model",),
        idempotent: bool = False,
    ) -> Tool:
        """A tool from an explicit JSON Schema (tools loaded from a catalogue or a remote
        service). Arguments are checked with the schema and passed as keyword arguments."""
        validator = jsonschema.Draft202012Validator(parameters)

        def validate(arguments: dict[str, Any]) -> dict[str, Any]:
            errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
            if errors:
                raise InvalidArguments("; ".join(_describe_schema_error(e) for e in errors))
            return arguments

        return cls(
            name=name,
            description=description,
            parameters=dict(parameters),
            function=function,
            takes_context=takes_context,
            timeout=timeout,
            requires_approval=requires_approval,
            view=view,
            visibility=visibility,
            idempotent=idempotent,
            validate=validate,
        )


def _describe_schema_error(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.path) or "arguments"
    return f"{where}: {error.message}"


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    prepare: Prepare | None = None,
    summarize: Summarize | None = None,
    intercept: Intercept | None = None,
    display: Display | None = None,
    requires_approval: ApprovalPolicy = False,
    view: View | None = None,
    visibility: Sequence[Visibility] = ("model",),
    idempotent: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    prepare: Prepare | None = None,
    summarize: Summarize | None = None,
    intercept: Intercept | None = None,
    display: Display | None = None,
    requires_approval: ApprovalPolicy = False,
    view: View | None = None,
    visibility: Sequence[Visibility] = ("model",),
    idempotent: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a tool from a typed function (sync or async, plain or generator)::

        @tool(display=lambda args: f"Looking up {args['order_id']}…", timeout=10)
        async def lookup_order(ctx: ToolContext, order_id: str) -> dict:
            '''Look an order up.

            Args:
                order_id: The order number, e.g. A-17.
            '''
            return await orders.get(order_id, token=ctx.token)

    The docstring (up to ``Args:``) is the description the model reads; the type hints are
    the schema its arguments are validated against. ``requires_approval`` (``True`` or a
    function of the :class:`~agentstream.messages.ToolCall`) makes a call wait for a person's
    yes before it runs::

        @tool(requires_approval=lambda call: call.arguments["amount"] > 100)
        def refund(order_id: str, amount: float) -> str: ...

    ``view`` draws the result with an interactive page of the tool's own
    (:class:`~agentstream.tools.views.View`, an MCP App); ``visibility`` says who may call
    the tool: ``("model",)`` by default, ``("model", "app")`` to let that page call it back,
    ``("app",)`` for a tool only a page calls (the model never sees it)::

        @tool(view=View(path=Path(__file__).parent / "preview.html"))
        def preview_workflow(workflow: dict) -> dict: ...
    ``idempotent=True`` says a call may be run again when the worker running it died before
    it returned (see :attr:`Tool.idempotent`).
    """
    shown = tuple(visibility)
    if not shown or any(v not in ("model", "app") for v in shown):
        raise ValueError(f"visibility must hold 'model' and/or 'app', not {visibility!r}")

    if display is not None and not callable(display):
        # Told where the tool is declared, not as a failed run when the model first calls it.
        raise TypeError(
            "display must be a function of the call's arguments, e.g. "
            f"display=lambda args: f\"Looking up {{args['id']}}…\", not {type(display).__name__}"
        )

    def build(fn: Callable[..., Any]) -> Tool:
        summary, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
        model, takes_context = _arguments_model(fn, arg_docs)
        schema = model.model_json_schema()
        schema.pop("title", None)
        tool_name = name or fn.__name__
        return Tool(
            name=tool_name,
            description=description or summary or fn.__name__.replace("_", " "),
            parameters=schema,
            function=fn,
            takes_context=takes_context,
            timeout=timeout,
            prepare=prepare,
            summarize=summarize,
            intercept=intercept,
            display=display,
            requires_approval=requires_approval,
            view=None
            if view is None
            else ToolView(
                source=LOCAL_SOURCE, uri=f"ui://{LOCAL_SOURCE}/{tool_name}", content=view
            ),
            visibility=shown,
            idempotent=idempotent,
            validate=_pydantic_validator(model),
        )

    return build(function) if function is not None else build


def _arguments_model(
    fn: Callable[..., Any], arg_docs: dict[str, str]
) -> tuple[type[BaseModel], bool]:
    hints = get_type_hints(fn)
    fields: dict[str, Any] = {}
    takes_context = False
    for position, param in enumerate(inspect.signature(fn).parameters.values()):
        annotation = hints.get(param.name, Any)
        if position == 0 and annotation is ToolContext:
            takes_context = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {fn.__name__}: *args/**kwargs cannot be described to a model")
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, Field(default, description=arg_docs.get(param.name)))
    model = create_model(
        f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model, takes_context


def _pydantic_validator(model: type[BaseModel]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    names = tuple(model.model_fields)

    def validate(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            parsed = model.model_validate(arguments)
        except ValidationError as exc:
            raise InvalidArguments(_describe_validation_error(exc)) from None
        return {n: getattr(parsed, n) for n in names}

    return validate


def _describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


_SECTION = re.compile(r"^(\w[\w ]*):\s*$")
_ARG_SECTIONS = {"Args", "Arguments", "Parameters"}
_ARG_LINE = re.compile(r"^\s+(\*{0,2}\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (the text before the first section such as ``Args:`` or
    ``Returns:``) and per-argument text from a Google-style ``Args:`` section."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        header = _SECTION.match(line)
        if header:
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in _ARG_SECTIONS:
            match = _ARG_LINE.match(line)
            if match and len(line) - len(line.lstrip()) <= 4:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}"
    return "\n".join(summary).strip(), args
