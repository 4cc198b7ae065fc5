"""The models this deployment offers (the data playground's ``listModels()``,
``GET /api/chat/models``, and ``agentstream models``: one list, built here).

The agent's own model is always offered, first and as the default, then the models the agent
offers itself (:attr:`~agentstream.Agent.offered_models`). The others come from
:class:`agentstream.providers.registry.ModelRegistry`: the configured models
(``AGENTSTREAM_MODELS``) and the ones a local Ollama or OpenAI-compatible server reports. A
request naming any other model is a 400, so a client cannot make the server call an arbitrary
vendor model on the operator's key (or load a script file by path).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from typing_extensions import TypedDict

from agentstream.agent import Agent
from agentstream.errors import ModelUnavailable
from agentstream.providers.registry import ModelInfo, ModelRegistry, model_info

__all__ = ["ModelCatalog", "OfferedModel", "ModelUnavailable"]

log = logging.getLogger("agentstream.server")


class OfferedModel(TypedDict):
    """A model a client may pick, as ``listModels()`` lists it (not the registry's
    :class:`~agentstream.providers.ModelInfo`, which describes any known model)."""

    id: str
    name: str
    provider: str
    default: bool


class ModelCatalog:
    """The models an agent's deployment offers, and the choice of one for a run."""

    def __init__(self, agent: Agent, registry: ModelRegistry | None = None) -> None:
        self._agent = agent
        self._registry = registry if registry is not None else ModelRegistry()

    async def offered(self) -> list[ModelInfo]:
        """Every model on offer, the agent's own first (``default``), then the agent's
        offered models (``source="agent"``), then the registry's, each once."""
        registered = await self._registry.list_models()
        known = {info.id: info for info in registered}
        own_id = self._agent.model_id
        names = self._agent.model_names
        listed = [replace(self._described(own_id, known), default=True)]
        listed += [
            _brought(model_id, name) for model_id, name in names.items() if model_id != own_id
        ]
        listed += [
            replace(info, default=False)
            for info in registered
            if info.id != own_id and info.id not in names
        ]
        return listed

    async def models(self) -> list[OfferedModel]:
        """:meth:`offered` as the wire lists it."""
        return [
            {"id": m.id, "name": m.display_name, "provider": m.provider, "default": m.default}
            for m in await self.offered()
        ]

    def _described(self, model_id: str, known: dict[str, ModelInfo]) -> ModelInfo:
        """The agent's own model as the agent names it, else as the registry lists it, else
        from its id."""
        name = self._agent.model_names.get(model_id)
        if name is not None:
            return _brought(model_id, name)
        if model_id in known:
            return known[model_id]
        try:
            return model_info(model_id)
        except ValueError:  # a provider object of the application's own
            return _brought(model_id, model_id.partition(":")[2] or model_id)

    async def choose(self, model: str | None) -> str | None:
        """The model id a run should use: ``None`` for the agent's own (so an agent built on
        a provider object keeps it), the registry id for another offered model (a bare name
        such as the data playground's ``gpt-4.1-mini`` is accepted when unambiguous). Raises
        :class:`ModelUnavailable`."""
        if model is None or model == self._agent.model_id:
            return None
        if model in self._agent.model_names:
            return model
        await self._registry.list_models()  # refreshes discovered models when stale
        info = self._registry.resolve(model)
        if info is None:
            raise ModelUnavailable(f"model {model!r} is not offered; see GET /api/chat/models")
        if info.id == self._agent.model_id:
            return None
        try:
            self._agent.provider(info.id)  # created once and cached by the agent
        except Exception as exc:
            log.warning("model %s is listed but unusable: %s", info.id, exc)
            raise ModelUnavailable(f"model {model!r} is not available on this server") from None
        return info.id


def _brought(model_id: str, name: str) -> ModelInfo:
    """A model the agent brings itself (``Agent.offered_models``)."""
    provider, sep, rest = model_id.partition(":")
    return ModelInfo(
        id=model_id,
        display_name=name,
        provider=provider if sep else "agent",
        model=rest if sep else model_id,
        source="agent",
    )
