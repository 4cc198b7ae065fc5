"""The agent loop with the scripted model: answers, tools, errors, limits."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from agentstream import Agent, Progress, RunInput, ToolContext, ToolResult, tool
from agentstream.agent import MAX_TURNS_MESSAGE, Retry
from agentstream.events import (
    RUN_EVENT_ADAPTER,
    PartEnded,
    PartStarted,
    PayloadEvent,
    ReasoningDelta,
    RunCompleted,
    RunFailed,
    RunWarning,
    TextDelta,
    ToolCallArgs,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnFinished,
    event_from_json,
    event_to_json,
)
from agentstream.messages import AssistantMessage, ToolResultsMessage, UserMessage
from agentstream.principal import Principal
from agentstream.tools import Tool

from .helpers import collect, of_type, scripted, types


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def test_no_tool_answer() -> None:
    provider = scripted(
        {"text": ["Hello", " there."], "usage": {"input_tokens": 3, "output_tokens": 2}}
    )
    events = await collect(Agent(model=provider), "hi")
    assert types(events) == [
        "run_started",
        "turn_started",
        "part_started",
        "text_delta",
        "text_delta",
        "part_ended",
        "usage",
        "turn_finished",
        "run_completed",
    ]
    assert [e.seq for e in events] == list(range(len(events)))
    assert len({e.run_id for e in events}) == 1
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert done.message == "Hello there."
    assert done.usage.input_tokens == 3
    assert provider.requests[0].messages == (UserMessage(content="hi"),)


async def test_events_round_trip_through_json() -> None:
    provider = scripted(
        {"text": "Adding.", "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
        {"text": "3"},
    )
    for event in await collect(Agent(model=provider, tools=[add]), "1+2?"):
        assert event_from_json(event_to_json(event)) == event
        assert RUN_EVENT_ADAPTER.validate_python(RUN_EVENT_ADAPTER.dump_python(event)) == event


async def test_tool_turn_feeds_result_back() -> None:
    provider = scripted(
        {
            "text": "Let me add.",
            "tool_calls": [{"id": "t1", "name": "add", "fragments": ['{"a": 2', ', "b": 40}']}],
        },
        {"text": "It is 42."},
    )
    agent = Agent(model=provider, tools=[add])
    run = agent.run("2+40?")
    events = [e async for e in run]
    assert types(events) == [
        "run_started", "turn_started", "part_started", "text_delta", "text_delta", "text_delta",
        "part_ended", "tool_call_started", "tool_call_delta", "tool_call_delta", "usage",
        "tool_call_args", "tool_call_finished", "turn_finished",
        "turn_started", "part_started", "text_delta", "text_delta", "text_delta", "part_ended",
        "usage", "turn_finished", "run_completed",
    ]  # fmt: skip
    # The arguments as the model streamed them, piece by piece, for protocols that show them.
    deltas = of_type(events, ToolCallDelta)
    assert [(d.call_id, d.delta) for d in deltas] == [("t1", '{"a": 2'), ("t1", ', "b": 40}')]
    # The blank line between the turns is streamed too: streamed text == the final answer.
    streamed = "".join(e.text for e in of_type(events, TextDelta))
    assert streamed == events[-1].message == "Let me add.\n\nIt is 42."
    (args,) = of_type(events, ToolCallArgs)
    assert args.arguments == {"a": 2, "b": 40}
    (finished,) = of_type(events, ToolCallFinished)
    assert (finished.is_error, finished.result, finished.output) == (False, "42", 42)
    second = provider.requests[1].messages
    assert isinstance(second[1], AssistantMessage)
    assert second[1].tool_calls[0].arguments == {"a": 2, "b": 40}
    assert isinstance(second[2], ToolResultsMessage)
    assert second[2].results[0].content == "42"
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert done.message == "Let me add.\n\nIt is 42."
    assert done.tool_history[0].input == {"a": 2, "b": 40}
    assert done.tool_history[0].text_offset == len("Let me add.")
    assert [m.role for m in run.new_messages] == ["assistant", "tool", "assistant"]


async def test_parallel_tools_run_concurrently_and_results_keep_call_order() -> None:
    import asyncio

    slow_started = asyncio.Event()
    fast_done = asyncio.Event()

    @tool
    async def slow() -> str:
        """Waits until the fast tool has finished: only possible if both run at once."""
        slow_started.set()
        await fast_done.wait()
        return "slow result"

    @tool
    async def fast() -> str:
        """Finishes first."""
        await slow_started.wait()
        fast_done.set()
        return "fast result"

    provider = scripted(
        {"tool_calls": [{"id": "a", "name": "slow"}, {"id": "b", "name": "fast"}]},
        {"text": "done"},
    )
    agent = Agent(model=provider, tools=[slow, fast], tool_timeout=5)
    events = await collect(agent)
    finished = of_type(events, ToolCallFinished)
    assert [f.call_id for f in finished] == ["b", "a"]  # completion order
    results = provider.requests[1].messages[-1]
    assert isinstance(results, ToolResultsMessage)
    assert [r.tool_call_id for r in results.results] == ["a", "b"]  # call order
    assert [r.content for r in results.results] == ["slow result", "fast result"]
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert [h.index for h in done.tool_history] == [0, 1]


@pytest.mark.parametrize(
    ("call", "kind", "says"),
    [
        ({"name": "add", "fragments": ['{"a": 1, "b":']}, "invalid_arguments", "not valid JSON"),
        (
            {"name": "add", "arguments": {"a": "one", "b": 2}},
            "invalid_arguments",
            "a: Input should be a valid integer",
        ),
        ({"name": "add", "arguments": {"a": 1}}, "invalid_arguments", "b: Field required"),
        (
            {"name": "add", "arguments": {"a": 1, "b": 2, "c": 3}},
            "invalid_arguments",
            "c: Extra inputs",
        ),
        ({"name": "add", "fragments": ["[1, 2]"]}, "invalid_arguments", "must be a JSON object"),
        (
            {"name": "subtract", "arguments": {}},
            "unknown_tool",
            "Unknown tool 'subtract'. Available tools: add",
        ),
    ],
)
async def test_bad_calls_reach_the_model_as_errors(
    call: dict[str, Any], kind: str, says: str
) -> None:
    provider = scripted({"tool_calls": [call]}, {"text": "Sorry, let me explain."})
    events = await collect(Agent(model=provider, tools=[add]))
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.is_error
    assert finished.error is not None and finished.error.kind == kind
    assert says in finished.error.message
    result = provider.requests[1].messages[-1]
    assert isinstance(result, ToolResultsMessage) and result.results[0].is_error
    assert says in json.loads(result.results[0].content)["error"]
    assert isinstance(events[-1], RunCompleted)


async def test_broken_json_keeps_the_raw_text_for_clients() -> None:
    provider = scripted(
        {"tool_calls": [{"name": "add", "fragments": ['{"a": 1,']}]}, {"text": "ok"}
    )
    events = await collect(Agent(model=provider, tools=[add]))
    (args,) = of_type(events, ToolCallArgs)
    assert (args.arguments, args.raw_arguments) == ({}, '{"a": 1,')


async def test_a_tool_that_raises_does_not_end_the_run() -> None:
    @tool
    def explode() -> str:
        """Always fails."""
        raise ConnectionError("inventory service unreachable")

    provider = scripted({"tool_calls": [{"name": "explode"}]}, {"text": "The service is down."})
    events = await collect(Agent(model=provider, tools=[explode]))
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.is_error and finished.error is not None
    assert (finished.error.kind, finished.error.exception_type) == ("exception", "ConnectionError")
    assert json.loads(finished.result) == {"error": "inventory service unreachable"}
    done = events[-1]
    assert isinstance(done, RunCompleted) and done.message == "The service is down."


async def test_a_tool_error_that_quotes_the_callers_token_does_not_leak_it() -> None:
    secret = "eyJhbGciOiJIUzI1NiJ9.caller-token.signature"

    @tool
    def call_api(ctx: ToolContext) -> str:
        """Calls a downstream API with the caller's token."""
        raise RuntimeError(f"GET https://api.example/items?access_token={ctx.token} gave 500")

    provider = scripted({"tool_calls": [{"name": "call_api"}]}, {"text": "The API failed."})
    agent = Agent(model=provider, tools=[call_api])
    principal = Principal(user_id="u", token=secret)
    run = agent.run(RunInput(message="go", principal=principal))
    events = [event async for event in run]
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.error is not None and "gave 500" in finished.error.message
    assert secret not in repr(events)
    assert secret not in repr(run.new_messages)
    assert secret not in repr(provider.requests[1].messages)


async def test_tool_timeout() -> None:
    import asyncio

    @tool(timeout=0.05)
    async def hang() -> str:
        """Never returns."""
        await asyncio.sleep(30)
        return "never"

    provider = scripted({"tool_calls": [{"name": "hang"}]}, {"text": "It timed out."})
    events = await collect(Agent(model=provider, tools=[hang]))
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.error is not None and finished.error.kind == "timeout"
    assert finished.error.exception_type == "TimeoutError"


async def test_a_timeout_the_tool_raises_is_the_tools_own_error() -> None:
    """Only the per-tool deadline is a timeout of ours: a socket or HTTP client timeout
    inside the tool is reported with the tool's own message, kind and real duration."""
    import asyncio

    @tool(timeout=30)
    async def call_api() -> str:
        """Call a slow API."""
        await asyncio.sleep(0.05)
        raise TimeoutError("Connection timeout")

    provider = scripted({"tool_calls": [{"name": "call_api"}]}, {"text": "It failed."})
    events = await collect(Agent(model=provider, tools=[call_api]))
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.error is not None
    assert (finished.error.kind, finished.error.message, finished.error.exception_type) == (
        "exception",
        "Connection timeout",
        "TimeoutError",
    )
    assert finished.result == '{"error": "Connection timeout"}'
    assert finished.duration_ms >= 50


async def test_max_turns_ends_the_run_with_the_rounds_exceeded_message() -> None:
    loop_call = {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}
    provider = scripted(loop_call, loop_call, loop_call)
    agent = Agent(model=provider, tools=[add], max_turns=3)
    run = agent.run("loop forever")
    events = [e async for e in run]
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert (failed.kind, failed.message) == ("max_turns", MAX_TURNS_MESSAGE)
    assert len(provider.requests) == 3
    assert len(of_type(events, ToolCallFinished)) == 2  # the third turn's call is not run
    last = run.new_messages[-1]  # every call has a result, so the history stays valid
    assert isinstance(last, ToolResultsMessage) and last.results[0].is_error


async def test_max_turns_per_request_overrides_the_agent() -> None:
    loop_call = {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}
    provider = scripted(*[loop_call] * 6)
    events = await collect(Agent(model=provider, tools=[add]), RunInput(message="x", max_turns=5))
    assert isinstance(events[-1], RunFailed) and len(provider.requests) == 5


async def test_provider_error_mid_stream_fails_the_run_safely() -> None:
    provider = scripted(
        {"text": ["Partial ", "answer ", "never ", "finished"],
         "error": {"kind": "overloaded", "message": "The model is overloaded. Try again later.", "after": 2}}
    )  # fmt: skip
    agent = Agent(model=provider)
    run = agent.run("hi")
    events = [e async for e in run]
    assert types(events)[-4:] == ["text_delta", "text_delta", "part_ended", "run_failed"]
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert (failed.kind, failed.message) == (
        "overloaded",
        "The model is overloaded. Try again later.",
    )
    assert run.new_messages == [AssistantMessage(text="Partial answer ")]
    assert provider.closed_early == 1


async def test_unexpected_bug_becomes_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    def broken_summary(value: Any) -> Any:
        raise AssertionError("bug in a hook")

    bad = add.with_hooks(summarize=broken_summary)
    provider = scripted(
        {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}, {"text": "ok"}
    )
    events = await collect(Agent(model=provider, tools=[bad]))
    # A hook is part of the tool: its failure is the tool's error, reported to the model.
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.is_error and isinstance(events[-1], RunCompleted)


async def test_async_generator_tool_streams_progress() -> None:
    @tool
    async def search(query: str) -> Any:
        """Search with progress."""
        yield Progress(stage="searching", message="Found 15 articles...", fraction=0.5)
        yield Progress(stage="ranking", fraction=0.9, data={"kept": 5})
        yield ToolResult(text=f"5 articles about {query}")

    provider = scripted(
        {"tool_calls": [{"name": "search", "arguments": {"query": "CRISPR"}}]}, {"text": "Found."}
    )
    events = await collect(Agent(model=provider, tools=[search]))
    progress = of_type(events, ToolProgress)
    assert [(p.stage, p.message, p.fraction, p.data) for p in progress] == [
        ("searching", "Found 15 articles...", 0.5, None),
        ("ranking", None, 0.9, {"kept": 5}),
    ]
    assert types(events).index("tool_progress") > types(events).index("tool_call_args")
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.result == "5 articles about CRISPR"


async def test_sync_generator_and_context_report_progress_from_a_thread() -> None:
    threads: list[str] = []

    @tool
    def crunch(ctx: ToolContext, n: int) -> Any:
        """Crunch numbers in a worker thread."""
        threads.append(threading.current_thread().name)
        ctx.report(stage="start", message=f"user {ctx.user_id}")
        for i in range(n):
            yield Progress(stage="step", fraction=(i + 1) / n)
        return n * 2

    provider = scripted({"tool_calls": [{"name": "crunch", "arguments": {"n": 2}}]}, {"text": "ok"})
    principal = Principal(user_id="u1", token="secret-token")
    events = await collect(
        Agent(model=provider, tools=[crunch]), RunInput(message="go", principal=principal)
    )
    assert threads and threads[0].startswith("agentstream-tool")
    progress = of_type(events, ToolProgress)
    assert [(p.stage, p.fraction) for p in progress] == [
        ("start", None),
        ("step", 0.5),
        ("step", 1.0),
    ]
    assert progress[0].message == "user u1"
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.output == 4


async def test_a_blocking_sync_tool_does_not_block_the_event_loop() -> None:
    import asyncio

    released = threading.Event()

    @tool
    def blocking() -> str:
        """Blocks its thread until the event loop releases it."""
        if not released.wait(timeout=5):
            return "the event loop was blocked"
        return "released"

    async def release_from_the_loop() -> None:
        await asyncio.sleep(0.01)
        released.set()

    provider = scripted({"tool_calls": [{"name": "blocking"}]}, {"text": "ok"})
    helper = asyncio.create_task(release_from_the_loop())
    events = await collect(Agent(model=provider, tools=[blocking]))
    await helper
    (finished,) = of_type(events, ToolCallFinished)
    assert finished.result == "released"


async def test_tools_receive_context_token_and_options() -> None:
    seen: dict[str, Any] = {}

    @tool
    async def whoami(ctx: ToolContext) -> str:
        """Report who is asking."""
        seen.update(user=ctx.user_id, token=ctx.token, context=ctx.context,
                    conversation=ctx.conversation_id, options=dict(ctx.options))  # fmt: skip
        return "ok"

    provider = scripted({"tool_calls": [{"name": "whoami"}]}, {"text": "done"})
    run_input = RunInput(
        message="who?",
        principal=Principal(user_id="u7", tenant_id="acme", token="raw.jwt.token"),
        context={"workflow_id": "w1"},
        conversation_id="c1",
        tool_options={"rag_enabled": False},
    )
    await collect(Agent(model=provider, tools=[whoami]), run_input)
    assert seen == {"user": "u7", "token": "raw.jwt.token", "context": {"workflow_id": "w1"},
                    "conversation": "c1", "options": {"rag_enabled": False}}  # fmt: skip
    assert "raw.jwt.token" not in repr(run_input.principal)


async def test_hooks_inject_summarise_and_intercept() -> None:
    from agentstream.events import Payload

    def inject_workflow(arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        if not str(arguments.get("workflow_id", "")).startswith("wf-"):
            arguments["workflow_id"] = ctx.context["workflow_id"]
        return arguments

    def summarise(rules: Any) -> Any:
        return [{"id": r["id"]} for r in rules]

    def intercept(value: Any, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(
            text='{"status":"preview_sent"}',
            payload=Payload(kind="workflow_preview", data={"workflow": value}),
        )

    @tool(prepare=inject_workflow, summarize=summarise)
    def list_rules(workflow_id: str) -> list[dict[str, Any]]:
        """List rules."""
        return [{"id": workflow_id, "body": "x" * 100}]

    @tool(intercept=intercept)
    def preview(name: str) -> dict[str, Any]:
        """Preview."""
        return {"name": name}

    provider = scripted(
        {"tool_calls": [
            {"id": "1", "name": "list_rules", "arguments": {"workflow_id": "Low Stock Alert"}},
            {"id": "2", "name": "list_rules", "arguments": {"workflow_id": "wf-other"}},
            {"id": "3", "name": "preview", "arguments": {"name": "Alert"}},
        ]},
        {"text": "Preview sent."},
    )  # fmt: skip
    agent = Agent(model=provider, tools=[list_rules, preview])
    events = await collect(agent, RunInput(message="x", context={"workflow_id": "wf-ctx"}))
    args = {a.call_id: a.arguments for a in of_type(events, ToolCallArgs)}
    assert args["1"] == {"workflow_id": "wf-ctx"}  # injected over a non-id value
    assert args["2"] == {"workflow_id": "wf-other"}  # a valid id from the model is kept
    results = provider.requests[1].messages[-1]
    assert isinstance(results, ToolResultsMessage)
    assert json.loads(results.results[0].content) == [{"id": "wf-ctx"}]  # summarised for the model
    finished = {f.call_id: f for f in of_type(events, ToolCallFinished)}
    assert finished["1"].output == [{"id": "wf-ctx", "body": "x" * 100}]  # clients see it whole
    assert results.results[2].content == '{"status":"preview_sent"}'
    (payload,) = of_type(events, PayloadEvent)
    assert payload.payload.kind == "workflow_preview" and payload.payload.payload_id
    assert payload.payload.data == {"workflow": {"name": "Alert"}}
    preview_done = next(
        i
        for i, e in enumerate(events)
        if getattr(e, "call_id", None) == "3" and e.type == "tool_call_finished"
    )
    assert events[preview_done + 1] is payload  # tool_call_result, then workflow_preview


async def test_tool_from_explicit_schema() -> None:
    async def lookup(sku: str) -> dict[str, Any]:
        return {"sku": sku, "stock": 3}

    lookup_tool = Tool.from_schema(
        name="lookup",
        description="Look up stock.",
        parameters={
            "type": "object",
            "properties": {"sku": {"type": "string"}},
            "required": ["sku"],
        },
        function=lookup,
    )
    provider = scripted(
        {"tool_calls": [{"id": "bad", "name": "lookup", "arguments": {"sku": 5}},
                        {"id": "ok", "name": "lookup", "arguments": {"sku": "A1"}}]},
        {"text": "3 left."},
    )  # fmt: skip
    events = await collect(Agent(model=provider, tools=[lookup_tool]))
    finished = {f.call_id: f for f in of_type(events, ToolCallFinished)}
    assert finished["bad"].is_error and "sku: 5 is not of type 'string'" in finished["bad"].result
    assert finished["ok"].output == {"sku": "A1", "stock": 3}


async def test_answer_check_retries_once() -> None:
    class NoShouting:
        def check(self, text: str) -> Retry | None:
            if text.isupper():
                return Retry(user_message="Please do not shout.", notice="[Retrying...]")
            return None

    from agentstream.providers.scripted import ScriptedProvider

    provider = ScriptedProvider(
        {
            "rules": [
                {"match": "do not shout", "turns": [{"text": "hello"}]},
                {"turns": [{"text": "HELLO"}]},
            ]
        }
    )
    agent = Agent(model=provider, answer_checks=[NoShouting()])
    events = await collect(agent)
    texts = [e.text for e in of_type(events, TextDelta)]
    assert texts == ["HELLO", "[Retrying...]", "hello"]
    assert provider.requests[1].messages[-1] == UserMessage(content="Please do not shout.")
    done = events[-1]
    assert isinstance(done, RunCompleted) and done.message == "hello"


async def test_failing_tool_source_falls_back_to_no_tools() -> None:
    from collections.abc import Sequence

    class Unreachable:
        async def load(self, principal: Principal, scopes: Sequence[str]) -> Sequence[Tool]:
            raise ConnectionError("catalogue down")

    provider = scripted({"text": "Answering without tools."})
    events = await collect(Agent(model=provider, tools=[add], tool_sources=[Unreachable()]))
    (warning,) = of_type(events, RunWarning)
    assert warning.code == "tool_fallback"
    assert provider.requests[0].tools == ()
    assert isinstance(events[-1], RunCompleted)


async def test_reasoning_with_signature_is_kept_in_history() -> None:
    provider = scripted(
        {"reasoning": "Thinking it over.", "signature": "sig==", "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]},
        {"text": "2"},
    )  # fmt: skip
    events = await collect(Agent(model=provider, tools=[add]))
    assert "reasoning_delta" in types(events)
    assistant = provider.requests[1].messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.reasoning[0].text == "Thinking it over."
    assert assistant.reasoning[0].signature == "sig=="


async def test_a_retried_answer_keeps_earlier_turns_text() -> None:
    from agentstream.providers.scripted import ScriptedProvider

    class NoShouting:
        def check(self, text: str) -> Retry | None:
            return Retry(user_message="quieter", notice="[Retrying...]") if text.isupper() else None

    provider = ScriptedProvider(
        {"rules": [
            {"match": "quieter", "turns": [{"text": "fine"}]},
            {"turns": [{"text": "Adding.", "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}, {"text": "TWO"}]},
        ]}
    )  # fmt: skip
    events = await collect(Agent(model=provider, tools=[add], answer_checks=[NoShouting()]))
    done = events[-1]
    assert isinstance(done, RunCompleted)
    assert done.message == "Adding.\n\nfine"
    assert done.tool_history[0].text_offset == len("Adding.")


async def test_the_fallback_warning_follows_run_started() -> None:
    from collections.abc import Sequence

    class Unreachable:
        async def load(self, principal: Principal, scopes: Sequence[str]) -> Sequence[Tool]:
            raise ConnectionError("catalogue down")

    events = await collect(Agent(model=scripted({"text": "ok"}), tool_sources=[Unreachable()]))
    assert types(events)[:2] == ["run_started", "warning"]
    assert [e.seq for e in events] == list(range(len(events)))


def test_an_agent_built_on_a_provider_resolves_its_own_model_id() -> None:
    provider = scripted({"text": "ok"})
    agent = Agent(model=provider)
    assert agent.provider(agent.model_id) is provider
    assert agent.provider() is provider


def _check_parts(events: list[Any]) -> list[tuple[int, str]]:
    """Every text and reasoning delta lies inside a part of its kind; parts never nest, are
    numbered from 0 across the run, and are all closed by the run's last event."""
    open_part: tuple[int, str] | None = None
    seen: list[tuple[int, str]] = []
    for event in events:
        if isinstance(event, PartStarted):
            assert open_part is None
            assert event.part == len(seen)
            open_part = (event.part, event.kind)
            seen.append(open_part)
        elif isinstance(event, PartEnded):
            assert open_part == (event.part, event.kind)
            open_part = None
        elif isinstance(event, TextDelta | ReasoningDelta):
            assert open_part is not None
            assert open_part[1] == ("text" if isinstance(event, TextDelta) else "reasoning")
        elif isinstance(event, ToolCallStarted):
            assert open_part is None
    assert open_part is None
    return seen


async def test_parts_and_turns_bound_text_reasoning_and_tools() -> None:
    provider = scripted(
        {
            "reasoning": "Adding first.",
            "text": "Let me add.",
            "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
        },
        {"reasoning": "Done.", "text": ["It is ", "3."]},
    )
    events = await collect(Agent(model=provider, tools=[add]), "1+2?")
    assert _check_parts(events) == [(0, "reasoning"), (1, "text"), (2, "reasoning"), (3, "text")]
    finished = of_type(events, TurnFinished)
    assert [(t.turn, t.reason) for t in finished] == [(0, "tool_calls"), (1, "stop")]
    # A turn finishes after its tools: the results belong to the step that asked for them.
    tool_done = next(i for i, e in enumerate(events) if isinstance(e, ToolCallFinished))
    assert events.index(finished[0]) > tool_done
    assert isinstance(events[-1], RunCompleted) and events[-2] is finished[1]


async def test_a_cancelled_run_closes_its_open_part_before_it_ends() -> None:
    import asyncio

    provider = scripted({"text": ["one ", "two ", "three ", "four"]}, delay=0.05)
    run = Agent(model=provider).run("count")
    events: list[Any] = []
    async for event in run:
        events.append(event)
        if isinstance(event, TextDelta) and len(of_type(events, TextDelta)) == 2:
            run.cancel("stop")
            await asyncio.sleep(0)
    assert types(events)[-2:] == ["part_ended", "run_cancelled"]
    _check_parts(events)
