"""A model that replays a script: for tests, demos, and users testing their own tools.

A script is data (JSON or YAML) or a function. Data scripts hold *rules*: the first rule whose
``match`` regex finds the latest user message supplies the turns; a rule without ``match`` is
the default. Which turn plays is derived from the request (the number of assistant messages
since the latest user message), so one provider serves any number of concurrent runs and
conversations, like a real model would::

    rules:
      - match: weather
        turns:
          - text: "Let me check."
            tool_calls: [{name: get_weather, arguments: {city: Paris}}]
          - text: ["It is ", "sunny."]
            usage: {input_tokens: 40, output_tokens: 8}

A turn may stream reasoning, text (a string is streamed word by word; a list chunk by chunk),
tool calls (``arguments`` as an object, or raw ``fragments`` that may be broken JSON on
purpose), usage, a ``delay`` before each chunk, and an ``error`` raised after ``after`` chunks.

The provider records every request it receives (``requests``), counts streams closed before
they finished (``closed_early``) and those still going (``streaming``), so tests can assert
on all three.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict, Field

from agentstream.events import Usage
from agentstream.messages import AssistantMessage, UserMessage
from agentstream.providers.base import (
    ChatRequest,
    ErrorKind,
    MessageComplete,
    MessageStart,
    ProviderError,
    ProviderEvent,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolInputChunk,
    ToolUseStart,
)

__all__ = [
    "Script",
    "ScriptedCall",
    "ScriptedError",
    "ScriptedProvider",
    "ScriptedRule",
    "ScriptedTurn",
    "position",
]

_WORDS = re.compile(r"\S+\s*|\s+")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptedCall(_Model):
    name: str
    id: str | None = None
    arguments: dict[str, Any] | None = None
    fragments: list[str] | None = None
    """Raw JSON fragments, streamed as-is (use to script broken arguments)."""


class ScriptedError(_Model):
    kind: ErrorKind = "provider"
    message: str = "The scripted model failed."
    after: int = 0
    """Chunks to stream before failing."""


class ScriptedTurn(_Model):
    reasoning: str | list[str] = Field(default_factory=list)
    signature: str | None = None
    text: str | list[str] = Field(default_factory=list)
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    usage: dict[str, int] | None = None
    delay: float | None = None
    error: ScriptedError | None = None
    stop_reason: StopReason | None = None


class ScriptedRule(_Model):
    match: str | None = None
    turns: list[ScriptedTurn]


class Script(_Model):
    rules: list[ScriptedRule] = Field(default_factory=list)
    delay: float = 0.0
    """Default seconds before each chunk."""

    @classmethod
    def parse(cls, data: Any) -> Script:
        """From parsed JSON/YAML; ``{"turns": [...]}`` is short for one default rule."""
        if isinstance(data, dict) and "turns" in data and "rules" not in data:
            data = {**data, "rules": [{"turns": data["turns"]}]}
            del data["turns"]
        return cls.model_validate(data)

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """The script in a JSON or YAML file. A file that cannot be read, parsed or used as a
        script is a :class:`ValueError` of one line naming it (the model id
        ``scripted:<path>`` is checked before a server starts)."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"cannot read the script {str(path)!r}: {exc.strerror}") from None
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            reason = str(exc).splitlines()[0]
            raise ValueError(f"the script {str(path)!r} is not JSON or YAML: {reason}") from None
        try:
            return cls.parse(data)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the top level"
            raise ValueError(
                f"the script {str(path)!r} is not a script: {where}: {first['msg']}"
            ) from None

    def turn_for(self, request: ChatRequest) -> ScriptedTurn:
        last_user, turn = position(request)
        for rule in self.rules:
            if rule.match is None or re.search(rule.match, last_user, re.IGNORECASE):
                if turn < len(rule.turns):
                    return rule.turns[turn]
                raise ProviderError("provider", f"The script has no turn {turn} for this message.")
        raise ProviderError("provider", "No scripted rule matches this message.")


def position(request: ChatRequest) -> tuple[str, int]:
    """The latest user message and how many assistant turns followed it."""
    turn = 0
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            return message.content, turn
        if isinstance(message, AssistantMessage):
            turn += 1
    return "", turn


Handler = Callable[[ChatRequest], ScriptedTurn | dict[str, Any]]


class ScriptedProvider:
    """Plays a :class:`Script`, or asks ``handler(request)`` for each turn."""

    name = "scripted"

    def __init__(self, script: Script | dict[str, Any] | Handler, *, model: str = "script") -> None:
        self.model = model
        if isinstance(script, Script | dict):
            parsed = script if isinstance(script, Script) else Script.parse(script)
            self._script: Script | None = parsed
            self._handler: Handler | None = None
        else:
            self._script, self._handler = None, script
        self.requests: list[ChatRequest] = []
        self.closed_early = 0
        self.streaming = 0
        self._calls = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        return cls(Script.load(path), model=Path(path).stem)

    def _turn(self, request: ChatRequest) -> ScriptedTurn:
        if request.purpose == "summary":
            return ScriptedTurn(text=_digest(request), usage=None)
        if self._script is not None:
            return self._script.turn_for(request)
        assert self._handler is not None
        turn = self._handler(request)
        return turn if isinstance(turn, ScriptedTurn) else ScriptedTurn.model_validate(turn)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        self.requests.append(request)
        turn = self._turn(request)
        delay = (
            turn.delay if turn.delay is not None else (self._script.delay if self._script else 0)
        )
        # One generator, paced inline: the bench's model, whose per-delta cost counts as ours.
        budget = turn.error.after if turn.error else None
        finished = False
        self.streaming += 1
        try:
            for paced, event in self._steps(turn):
                if paced:
                    if budget is not None:
                        if budget <= 0:
                            assert turn.error is not None
                            raise ProviderError(turn.error.kind, turn.error.message)
                        budget -= 1
                    if delay:
                        await asyncio.sleep(delay)
                yield event
            finished = True
        finally:
            self.streaming -= 1
            if not finished:
                self.closed_early += 1

    def _steps(self, turn: ScriptedTurn) -> Iterator[tuple[bool, ProviderEvent]]:
        """The turn's events, each with whether it waits for the pace (and spends the error
        budget) before it is sent."""
        yield False, MessageStart(model=self.model)
        for piece in _chunks(turn.reasoning):
            yield True, ReasoningChunk(text=piece)
        if turn.signature is not None:
            yield False, ReasoningChunk(signature=turn.signature)
        for piece in _chunks(turn.text):
            yield True, TextChunk(text=piece)
        for call in turn.tool_calls:
            self._calls += 1
            call_id = call.id or f"call_{self._calls}"
            yield True, ToolUseStart(call_id=call_id, name=call.name)
            fragments = call.fragments
            if fragments is None:
                fragments = [json.dumps(call.arguments or {})]
            for fragment in fragments:
                yield False, ToolInputChunk(call_id=call_id, fragment=fragment)
        usage = Usage(**turn.usage) if turn.usage else Usage()
        stop: StopReason = turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")
        yield True, MessageComplete(stop_reason=stop, usage=usage)


def _chunks(value: str | list[str]) -> list[str]:
    return _WORDS.findall(value) if isinstance(value, str) else value


_SO_FAR = re.compile(r"The summary so far:\n\n(.*?)\n\nThe conversation went on", re.S)


def _digest(request: ChatRequest) -> str:
    """A scripted model's summary: the summary so far, then a line for each thing the user
    said in the part to summarize (a script is about answers; its summaries only need to
    be deterministic and to show what they cover)."""
    asked = request.messages[-1]
    text = asked.content if isinstance(asked, UserMessage) else ""
    found = _SO_FAR.search(text)
    lines = found.group(1).splitlines() if found else []
    for line in text.splitlines():
        if line.startswith("User: "):
            said = line.removeprefix("User: ")
            lines.append("- The user said: " + (said if len(said) <= 80 else said[:79] + "…"))
    return "\n".join(lines)
