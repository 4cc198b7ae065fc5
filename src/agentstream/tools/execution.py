"""Running one tool call: parse, prepare, validate, execute, shape the result.

Nothing here raises for a tool's sake: an unknown name, arguments that are not JSON or do not
fit the schema, an exception, a timeout all become a :class:`CallOutcome` whose ``outcome`` is
``error``, with a message the model can act on (tool errors are never fatal to the run). Sync
tools run in a worker thread so a blocking tool never stalls the event loop; generator tools
stream :class:`Progress`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from agentstream.attachments.types import Attachment
from agentstream.events import Payload, ToolError
from agentstream.messages import ERROR_OUTCOMES, ToolOutcome
from agentstream.tools.context import ToolContext
from agentstream.tools.definition import InvalidArguments, Tool
from agentstream.tools.results import Progress, ToolResult
from agentstream.tools.views import call_result, view_payload

__all__ = ["CallOutcome", "PreparedCall", "error_outcome", "prepare_call", "run_call"]

# A pool of its own: the default executor has min(32, cores + 4) threads, which a few slow
# sync tools would exhaust on a small machine.
_TOOL_THREADS = ThreadPoolExecutor(max_workers=32, thread_name_prefix="agentstream-tool")


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedCall:
    tool: Tool
    arguments: dict[str, Any]
    """Validated keyword arguments for the function."""
    shown_arguments: dict[str, Any]
    """The arguments as JSON-able data, for events and history."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    result: str
    output: Any = None
    outcome: ToolOutcome = "ok"
    error: ToolError | None = None
    payload: Payload | None = None
    duration_ms: float = 0.0
    display: str | None = None
    attachments: tuple[Attachment, ...] = ()
    """Files the model reads beside ``result`` (:attr:`ToolResult.attachments`)."""

    @property
    def is_error(self) -> bool:
        return self.outcome in ERROR_OUTCOMES


def error_outcome(kind: str, message: str, exception_type: str | None = None) -> CallOutcome:
    return CallOutcome(
        result=json.dumps({"error": message}),
        output={"error": message},
        outcome="error",
        error=ToolError(kind=kind, message=message, exception_type=exception_type),
    )


def parse_arguments(raw: str) -> dict[str, Any]:
    """Arguments from the model's JSON text; an empty text means no arguments."""
    if not raw.strip():
        return {}
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise InvalidArguments(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def prepare_call(
    tools: Mapping[str, Tool], name: str, raw_arguments: str, ctx: ToolContext
) -> tuple[dict[str, Any], PreparedCall | CallOutcome]:
    """Resolve and validate a call. Returns the arguments to show and either a call ready to
    run or the error outcome the model will receive."""
    try:
        arguments = parse_arguments(raw_arguments)
    except json.JSONDecodeError as exc:
        message = f"Arguments for '{name}' are not valid JSON ({exc.msg} at position {exc.pos})."
        return {}, error_outcome("invalid_arguments", message)
    except InvalidArguments as exc:
        return {}, error_outcome("invalid_arguments", f"Invalid arguments for '{name}': {exc}")
    found = tools.get(name)
    if found is None:
        available = ", ".join(sorted(tools)) or "none"
        message = f"Unknown tool '{name}'. Available tools: {available}."
        return arguments, error_outcome("unknown_tool", message)
    if found.prepare is not None:
        arguments = found.prepare(dict(arguments), ctx)
    try:
        validated = found.validate(arguments)
    except InvalidArguments as exc:
        return arguments, error_outcome(
            "invalid_arguments", f"Invalid arguments for '{name}': {exc}"
        )
    return arguments, PreparedCall(tool=found, arguments=validated, shown_arguments=arguments)


async def run_call(
    call: PreparedCall, ctx: ToolContext, default_timeout: float | None
) -> CallOutcome:
    """Execute a prepared call within its timeout and shape what it returned."""
    t = call.tool
    limit = t.timeout if t.timeout is not None else default_timeout
    started = time.perf_counter()
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            value = await _invoke(t, call.arguments, ctx)
        outcome = _shape(t, value, call.shown_arguments, ctx)
    except TimeoutError as exc:
        if deadline.expired():  # our own per-tool limit
            outcome = error_outcome(
                "timeout", f"Tool '{t.name}' timed out after {limit:g} s.", "TimeoutError"
            )
        else:  # the tool's own (a socket or HTTP client timeout inside it)
            outcome = _failure(exc, ctx)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a tool's failure is reported to the model, never raised
        outcome = _failure(exc, ctx)
    duration = (time.perf_counter() - started) * 1000
    return CallOutcome(
        result=outcome.result,
        output=outcome.output,
        outcome=outcome.outcome,
        error=outcome.error,
        payload=outcome.payload,
        duration_ms=duration,
        display=outcome.display,
        attachments=outcome.attachments,
    )


def _failure(exc: Exception, ctx: ToolContext) -> CallOutcome:
    """What the model, the client and the store learn of an exception a tool raised: its own
    message and its kind."""
    message = str(exc) or type(exc).__name__
    if ctx.token:
        # A downstream API's error may quote the caller's token (a URL, a header); the
        # message goes to the model, the client, the store and logs.
        message = message.replace(ctx.token, "[redacted]")
    return error_outcome("exception", message, type(exc).__name__)


async def _invoke(t: Tool, arguments: dict[str, Any], ctx: ToolContext) -> Any:
    fn = t.function
    args: tuple[Any, ...] = (ctx,) if t.takes_context else ()
    if inspect.isasyncgenfunction(fn):
        result: Any = None
        agen = fn(*args, **arguments)
        try:
            async for item in agen:
                if isinstance(item, Progress):
                    ctx._sink(item)
                else:
                    result = item
        finally:
            await agen.aclose()
        return result
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **arguments)
    loop = asyncio.get_running_loop()
    if inspect.isgeneratorfunction(fn):
        return await loop.run_in_executor(_TOOL_THREADS, partial(_drain, fn, args, arguments, ctx))
    return await loop.run_in_executor(_TOOL_THREADS, partial(fn, *args, **arguments))


def _drain(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], ctx: ToolContext
) -> Any:
    """Run a sync generator tool in a worker thread: progress goes out, the result comes back
    as the generator's return value or its last non-progress item."""
    gen = fn(*args, **kwargs)
    result: Any = None
    while True:
        try:
            item = next(gen)
        except StopIteration as stop:
            return stop.value if stop.value is not None else result
        if isinstance(item, Progress):
            ctx._sink(item)
        else:
            result = item


def _shape(t: Tool, value: Any, arguments: dict[str, Any], ctx: ToolContext) -> CallOutcome:
    outcome = _shaped(t, value, arguments, ctx)
    if t.view is None or outcome.payload is not None:
        return outcome
    # A tool drawn by a view: the client gets the call's input and result for its page.
    result = call_result(outcome.result, outcome.output)
    return replace(outcome, payload=view_payload(t.view, t.name, arguments, result))


def _shaped(t: Tool, value: Any, arguments: dict[str, Any], ctx: ToolContext) -> CallOutcome:
    if t.intercept is not None:
        intercepted = t.intercept(value, arguments, ctx)
        if intercepted is not None:
            value = intercepted
    if isinstance(value, ToolResult):
        output = value.output if value.output is not None else value.text
        return CallOutcome(
            result=value.text,
            output=output,
            payload=value.payload,
            display=value.display,
            attachments=value.attachments,
        )
    for_model = t.summarize(value) if t.summarize is not None else value
    text = for_model if isinstance(for_model, str) else json.dumps(for_model, default=str)
    return CallOutcome(result=text, output=value)
