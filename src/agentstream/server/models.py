"""The models this deployment offers (the data playground's ``listModels()``,
``GET /api/chat/models``).

The agent's own model is always offered, first and as the default. The others come from
:class:`agentstream.providers.registry.ModelRegistry`: the configured models
(``AGENTSTREAM_MODELS``) and the ones a local Ollama or OpenAI-compatible server reports. A
request naming any other model is a 400, so a client cannot make the server call an arbitrary
vendor model on the operator's key (or load a script file by path).
"""

from __future__ import annotations

import logging

from typing_extensions import TypedDict

from agentstream.agent import Agent
from agentstream.errors import ModelUnavailable
from agentstream.providers.registry import ModelRegistry, model_info

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
    def __init__(self, agent: Agent, registry: ModelRegistry | None = None) -> None:
        self._agent = agent
        self._registry = registry if registry is not None else ModelRegistry()

    async def models(self) -> list[OfferedModel]:
        own = self._agent.model_id
        listed: list[OfferedModel] = [_own(own, self._agent.model_names.get(own))]
        for model_id, name in self._agent.model_names.items():
            if model_id != own:
                provider = model_id.partition(":")[0] if ":" in model_id else "agent"
                listed.append(
                    {"id": model_id, "name": name, "provider": provider, "default": False}
                )
        for info in await self._registry.list_models():
            if info.id != own and info.id not in self._agent.model_names:
                listed.append(
                    {
                        "id": info.id,
                        "name": info.display_name,
                        "provider": info.provider,
                        "default": False,
                    }
                )
        return listed

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


def _own(model_id: str, name: str | None = None) -> OfferedModel:
    if name is not None:
        provider = model_id.partition(":")[0] if ":" in model_id else "agent"
        return {"id": model_id, "name": name, "provider": provider, "default": True}
    try:
        info = model_info(model_id)
        name, provider = info.display_name, info.provider
    except ValueError:
        provider, sep, rest = model_id.partition(":")
        name, provider = (rest, provider) if sep else (model_id, "agent")
    return {"id": model_id, "name": name, "provider": provider, "default": True}
