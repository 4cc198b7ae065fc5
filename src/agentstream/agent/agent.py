"""``Agent``: a model, tools, instructions and limits, ready to answer messages."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentstream.agent.budget import ContextLimits, LearnedWindows
from agentstream.agent.inputs import AnswerCheck, RunInput
from agentstream.agent.run import AgentRun
from agentstream.providers.base import Provider
from agentstream.providers.profiles import ModelProfile, ModelProfiles
from agentstream.tools.definition import Tool
from agentstream.tools.toolsets import Toolset, ToolSource

__all__ = ["Agent"]

ToolsLike = Toolset | Iterable[Tool | Callable[..., Any] | ToolSource]


@dataclass(kw_only=True)
class Agent:
    """Everything a run needs that does not change per request.

    ``model`` is a ``provider:model`` id (``anthropic:claude-sonnet-4-5``), a
    :class:`~agentstream.providers.base.Provider`, or ``None`` for ``$AGENTSTREAM_MODEL``
    (the offline demo when unset). ``max_turns`` is 20, as the workflow assistant protocol has it;
    the chat tray dialect passes 5 per request::

        agent = Agent(
            model="anthropic:claude-sonnet-4-5",
            tools=[search, create_ticket],
            instructions="You help the on-call engineer. Diagnose before you act.",
            tool_timeout=30,
        )
        async for event in agent.run("The billing page is down"):
            ...
    """

    model: str | Provider | None = None
    tools: ToolsLike = ()
    instructions: str = "You are a helpful assistant."
    name: str = "agent"
    max_turns: int = 20
    max_tokens: int = 4096
    temperature: float | None = None
    tool_timeout: float | None = 60.0
    model_options: Mapping[str, Any] = field(default_factory=dict)
    tool_sources: Sequence[ToolSource] = ()
    answer_checks: Sequence[AnswerCheck] = ()
    offered_models: Mapping[str, Provider] = field(default_factory=dict)
    """Other models clients may pick (the data playground's ``listModels()``): ready-made
    providers by id, ``"id"`` or ``"id=Display name"``; an application's own offline models,
    for instance."""
    profiles: ModelProfiles = field(default_factory=ModelProfiles)
    """What each model takes, holds and costs (:mod:`agentstream.providers.profiles`): the
    built-in catalog unless given; the server merges its configuration file's ``[models]``."""
    context_limits: ContextLimits = field(default_factory=ContextLimits)
    """How a conversation longer than the model's window is fitted into it
    (:mod:`agentstream.agent.budget`): what the model is sent, never what is kept."""
    learned_windows: LearnedWindows = field(default_factory=LearnedWindows, init=False, repr=False)
    """Windows learned from the vendors' refusals, shared by this agent's runs."""
    toolset: Toolset = field(init=False)
    _providers: dict[str, Provider] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.model_names: dict[str, str] = {}
        """Display names of :attr:`offered_models`, by id."""
        for key, provider in self.offered_models.items():
            model_id, _, display = key.partition("=")
            model_id = model_id.strip()
            if not model_id:
                raise ValueError(f"offered model {key!r} has no id")
            self.model_names[model_id] = display.strip() or model_id
            self._providers[model_id] = provider
        if isinstance(self.tools, Toolset):
            self.toolset = self.tools
            return
        # Tool sources (an MCP server...) may be listed among the tools.
        items = list(self.tools)
        sources: list[ToolSource] = [
            i for i in items if isinstance(i, ToolSource) and not isinstance(i, Tool)
        ]
        if sources:
            self.tool_sources = [*self.tool_sources, *sources]
        self.toolset = Toolset(
            i for i in items if not isinstance(i, ToolSource) or isinstance(i, Tool)
        )

    @property
    def model_id(self) -> str:
        if isinstance(self.model, str):
            return self.model
        if self.model is not None:
            return f"{self.model.name}:{self.model.model}"
        from agentstream.providers.registry import default_model_id

        return default_model_id()

    def provider(self, model: str | None = None) -> Provider:
        """The provider for ``model`` (default: the agent's), created once and reused."""
        own = self.model is not None and not isinstance(self.model, str)
        if own and model in (None, self.model_id):
            assert self.model is not None and not isinstance(self.model, str)
            return self.model
        model_id = model or self.model_id
        found = self._providers.get(model_id)
        if found is None:
            from agentstream.providers.registry import resolve_provider

            found = self._providers[model_id] = resolve_provider(model_id)
        return found

    def profile(self, model: str | None = None) -> ModelProfile:
        """The profile of ``model`` (default: the agent's)."""
        return self.profiles.profile(model or self.model_id)

    def run(self, run_input: RunInput | str) -> AgentRun:
        """Start answering; iterate the result for canonical events::

        async for event in agent.run("What does this workflow do?"):
            ...
        """
        if isinstance(run_input, str):
            run_input = RunInput(message=run_input)
        return AgentRun(self, run_input, self.provider(run_input.model))
