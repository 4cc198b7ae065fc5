"""``agentstream chat``: run an agent in the terminal and render its stream live."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import assert_never

from rich.console import Console
from rich.status import Status

from agentstream.agent import Agent, RunInput
from agentstream.cli.loading import AgentLoadError, load_agent
from agentstream.events import (
    PayloadEvent,
    ReasoningDelta,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunStarted,
    RunWarning,
    TextDelta,
    ToolCallArgs,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    Usage,
    UsageEvent,
)

__all__ = ["TerminalRenderer", "configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("message", help="what to ask the agent")
    parser.add_argument(
        "-a", "--agent", metavar="MODULE:AGENT", help="your agent (default: the built-in demo)"
    )
    parser.add_argument("-m", "--model", help="override the model, e.g. openai:gpt-4.1-mini")
    parser.add_argument("--reasoning", action="store_true", help="show the model's reasoning")


def run(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    try:
        agent = load_agent(args.agent)
        agent.provider(args.model)  # a bad model id is a one-line error, not a traceback
    except (AgentLoadError, ValueError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return 2
    return asyncio.run(
        chat(agent, args.message, console, model=args.model, show_reasoning=args.reasoning)
    )


async def chat(
    agent: Agent,
    message: str,
    console: Console,
    *,
    model: str | None = None,
    show_reasoning: bool = False,
) -> int:
    renderer = TerminalRenderer(console, show_reasoning=show_reasoning)
    async with agent.run(RunInput(message=message, model=model)) as agent_run:
        async for event in agent_run:
            renderer.render(event)
    return renderer.exit_code


class TerminalRenderer:
    """Text as it arrives, a spinner per running tool with its progress, the outcome of each
    call, and token usage at the end."""

    def __init__(self, console: Console, *, show_reasoning: bool = False) -> None:
        self.console = console
        self.show_reasoning = show_reasoning
        self.exit_code = 0
        self._status: Status | None = None
        self._usage = Usage()
        self._at_line_start = True

    def _write(self, text: str, style: str | None = None) -> None:
        self.console.print(text, end="", style=style, markup=False, soft_wrap=True)
        self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        self._stop_spinner()
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
                self._write(text)
            case ReasoningDelta(text=text):
                if self.show_reasoning:
                    self._write(text, style="dim italic")
            case ToolCallStarted() | TurnStarted() | RunStarted():
                pass
            case ToolCallArgs(name=name, arguments=arguments, display=display):
                label = display or f"{name}({json.dumps(arguments, ensure_ascii=False)[:80]})"
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
            case RunCompleted(usage=usage):
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
