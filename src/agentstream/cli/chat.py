"""``agentstream chat``: run an agent in the terminal and render its stream live.

The run goes through the same pipeline as the server (:class:`~agentstream.runs.Runner` with
chat hooks from ``--chat``), so the answer is shaped the same way: suggested values and
actions are parsed and shown as choices, their marker lines never reach the screen, and the
text is rendered as Markdown as it streams.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.status import Status

from agentstream.agent import Agent
from agentstream.chat.markers import MarkerLineFilter
from agentstream.cli.loading import AgentLoadError, check_model, load_agent, load_hooks
from agentstream.events import (
    AnswerShaped,
    ContextSummarized,
    ConversationSaved,
    PartEnded,
    PartStarted,
    PayloadEvent,
    ReasoningDelta,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunResumed,
    RunStarted,
    RunWarning,
    StateDelta,
    StateSnapshot,
    TextDelta,
    ToolCallArgs,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageEvent,
)
from agentstream.principal import ANONYMOUS
from agentstream.runs import RunHooks, Runner, RunRequest

__all__ = ["TerminalRenderer", "call_summary", "chat", "configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("message", help="what to ask the agent")
    parser.add_argument(
        "-a", "--agent", metavar="MODULE:AGENT", help="your agent (default: the built-in demo)"
    )
    parser.add_argument(
        "--chat",
        metavar="MODULE:CONFIG",
        help="a ChatConfig (pages, payload types, server actions...) or RunHooks",
    )
    parser.add_argument("-m", "--model", help="override the model, e.g. openai:gpt-4.1-mini")
    parser.add_argument("--reasoning", action="store_true", help="show the model's reasoning")


def run(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    try:
        agent = load_agent(args.agent)
        hooks = load_hooks(getattr(args, "chat", None), demo=args.agent is None)
        if args.model:
            check_model(agent, args.model, source="--model")
    except AgentLoadError as exc:
        console.print(f"[red]error:[/] {exc}", soft_wrap=True)  # one line, however long
        return 2
    return asyncio.run(
        chat(
            agent,
            args.message,
            console,
            hooks=hooks,
            model=args.model,
            show_reasoning=args.reasoning,
        )
    )


async def chat(
    agent: Agent,
    message: str,
    console: Console,
    *,
    hooks: RunHooks | None = None,
    model: str | None = None,
    show_reasoning: bool = False,
) -> int:
    runner = Runner(agent, hooks=hooks)
    renderer = TerminalRenderer(
        console, show_reasoning=show_reasoning, markers=runner.hooks.answer_markers
    )
    request = RunRequest(message=message, principal=ANONYMOUS, model=model)
    session = await runner.begin(request)
    try:
        async for event in session.events():
            renderer.render(event)
    finally:
        renderer.close()
    return renderer.exit_code


class TerminalRenderer:
    """Text rendered as Markdown as it arrives, a spinner per running tool with its progress,
    the outcome of each call, suggested values and actions, and token usage at the end."""

    def __init__(
        self,
        console: Console,
        *,
        show_reasoning: bool = False,
        markers: Sequence[str] = (),
    ) -> None:
        self.console = console
        self.show_reasoning = show_reasoning
        self.exit_code = 0
        self._status: Status | None = None
        self._usage = Usage()
        self._at_line_start = True
        self._filter = MarkerLineFilter(markers)
        self._text = ""
        """The Markdown block being streamed (up to the next tool call)."""
        self._live: Live | None = None

    def _write(self, text: str, style: str | None = None) -> None:
        self._end_text()
        self.console.print(text, end="", style=style, markup=False, soft_wrap=True)
        self._at_line_start = text.endswith("\n")

    def _markdown(self, text: str) -> None:
        text = self._filter.feed(text)
        if not text:
            return
        self._text += text
        if self._live is None:
            self._live = Live(console=self.console, auto_refresh=False, transient=False)
            self._live.start()
        self._live.update(Markdown(self._text.strip()), refresh=True)

    def _end_text(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            self.console.print()  # the rendered block ends where its last line ends
            self._at_line_start = True
        self._text = ""

    def close(self) -> None:
        self._end_text()
        self._stop_spinner()

    def _line(self, text: str) -> None:
        self._stop_spinner()
        self._end_text()
        if not self._at_line_start:
            self.console.print()
        self.console.print(text, highlight=False)
        self._at_line_start = True

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def render(self, event: RunEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._stop_spinner()
                self._markdown(text)
            case ReasoningDelta(text=text):
                if self.show_reasoning:
                    self._write(text, style="dim italic")
            case TurnStarted():
                self._filter.new_turn()
            case (
                ToolCallStarted()
                | ToolCallDelta()
                | RunStarted()
                | TurnFinished()
                | PartStarted()
                | PartEnded()
                | ConversationSaved()
            ):
                pass
            case ToolCallArgs(name=name, arguments=arguments, display=display):
                label = display or f"{name}({call_summary(arguments)})"
                self._line(f"[cyan]⚙[/] {label}")
                self._status = self.console.status(f"running {name}…")
                self._status.start()
            case ToolProgress(name=name, stage=stage, message=msg, fraction=fraction):
                parts = [p for p in (stage, msg) if p]
                percent = f" {fraction:.0%}" if fraction is not None else ""
                if self._status is not None:
                    self._status.update(f"{name}: {' – '.join(parts)}{percent}")
            case ToolCallFinished(name=name, is_error=is_error, error=error, duration_ms=ms):
                if is_error:
                    reason = error.message if error else "failed"
                    self._line(f"[red]✖[/] {name} failed after {ms:.0f} ms: {reason}")
                else:
                    self._line(f"[green]✔[/] {name} ({ms:.0f} ms)")
            case PayloadEvent(payload=payload):
                self._line(f"[magenta]▣[/] payload {payload.kind}: {payload.summary or ''}")
            case UsageEvent(usage=usage):
                self._usage = self._usage + usage
            case RunWarning(message=message):
                self._line(f"[yellow]warning:[/] {message}")
            case ContextSummarized(exchanges=exchanges):
                self._line(f"[dim]the first {exchanges} exchanges are now read as a summary[/]")
            case StateDelta(patch=patch):
                changed = ", ".join(f"{op['op']} {op['path'] or '/'}" for op in patch)
                self._line(f"[dim]state: {escape(changed)}[/]")
            case StateSnapshot():
                pass
            case RunResumed(notice=notice):
                self._line(f"[yellow]{notice}[/]")
            case AnswerShaped():
                self._choices(event)
            case RunCompleted(usage=usage):
                self._markdown(self._filter.flush())
                u = usage
                self._line(
                    f"[dim]tokens: {u.input_tokens} in, {u.output_tokens} out"
                    + (f", {u.reasoning_tokens} reasoning" if u.reasoning_tokens else "")
                    + (f", {u.cache_read_tokens} cached" if u.cache_read_tokens else "")
                    + "[/]"
                )
            case RunFailed(message=message):
                self._line(f"[red]error:[/] {message}")
                self.exit_code = 1
            case RunCancelled(reason=reason):
                self._line(f"[yellow]cancelled:[/] {reason}")
                self.exit_code = 130
            case _:
                assert_never(event)

    def _choices(self, done: AnswerShaped) -> None:
        """Suggested values and actions, as the chips a chat UI would show."""
        values = [v.label or v.value for v in done.suggested_values]
        actions = [a.label or a.action for a in done.suggested_actions]
        if values:
            self._line("[bold]suggestions:[/] " + "  ".join(f"[cyan]‹{v}›[/]" for v in values))
        if actions:
            self._line("[bold]actions:[/] " + "  ".join(f"[magenta]‹{a}›[/]" for a in actions))


def call_summary(arguments: Mapping[str, Any], width: int = 40) -> str:
    """``key="value", n=3`` with each long value shortened on its own, so the line stays
    short without cutting a string (or the closing quote) at a random place."""
    parts = []
    for key, value in arguments.items():
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > width:
            if isinstance(value, str):
                text = json.dumps(value[: width - 3] + "…", ensure_ascii=False)
            else:
                text = text[: width - 1] + "…"
        parts.append(f"{key}={text}")
    return ", ".join(parts)
