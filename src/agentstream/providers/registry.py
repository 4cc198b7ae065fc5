"""Model ids to providers, and the list of models a deployment offers.

A model id is ``<provider>:<model>``: ``anthropic:claude-sonnet-4-5``, ``openai:gpt-4.1-mini``,
``google:gemini-2.5-flash`` (``gemini:`` is an alias), ``ollama:qwen3:14b`` (everything after the
first colon is the vendor's model name), ``scripted:<path to a JSON/YAML script>``, or ``demo`` (the
offline scripted demo). :func:`resolve_provider` makes the provider; vendor modules are imported
only when asked for, so a deployment that uses one vendor never imports the other SDKs. The
providers come from their declarations in :mod:`.catalog`, plugins included.

:class:`ModelRegistry` is the list behind ``agentstream models`` and the data playground's
``listModels()``:
the configured models (code, or ``AGENTSTREAM_MODELS``, comma-separated, each optionally
``id=Display name``) plus, where reachable, the models the providers that can discover report
(an Ollama server, an OpenAI-compatible server at ``OPENAI_BASE_URL``), asked with a short
timeout and cached briefly.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from agentstream.providers.base import Provider
from agentstream.providers.catalog import ProviderSpec, find_spec, load_object, provider_specs

__all__ = [
    "DEFAULT_MODEL",
    "ModelInfo",
    "ModelRegistry",
    "missing_key",
    "model_info",
    "parse_model_id",
    "resolve_provider",
]

log = logging.getLogger("agentstream.providers")

DEFAULT_MODEL = "demo"

_LOCAL = ("scripted", "demo")


def parse_model_id(model_id: str) -> tuple[str, str]:
    """``"ollama:qwen3:14b"`` → ``("ollama", "qwen3:14b")``; ``"demo"`` → ``("demo", "")``;
    an alias gives its provider's prefix (``"gemini:x"`` → ``("google", "x")``). Raises
    :class:`ValueError` with the accepted forms for anything else."""
    text = model_id.strip()
    if text == "demo":
        return "demo", ""
    prefix, sep, name = text.partition(":")
    spec = find_spec(prefix)
    if spec is not None:
        prefix = spec.prefix
    if not sep or (spec is None and prefix not in _LOCAL) or not name.strip():
        known = [s.prefix for s in provider_specs()] + ["scripted"]
        raise ValueError(
            f"unknown model id {model_id!r}: expected 'demo' or '<provider>:<model>' with "
            f"provider one of {', '.join(known)} (e.g. 'openai:gpt-4.1-mini')"
        )
    return prefix, name.strip()


def resolve_provider(model: str | Provider | None = None, **overrides: Any) -> Provider:
    """The provider for a model id (``None``: ``$AGENTSTREAM_MODEL``, else ``demo``).

    ``overrides`` go to the vendor provider's constructor: ``api_key``, ``base_url`` (``host``
    for Ollama), ``timeouts``, ``retry``, ``client``. A :class:`Provider` is returned as is::

        local = resolve_provider("openai:qwen2.5-coder", base_url="http://127.0.0.1:8080/v1")
        agent = Agent(model=local)
    """
    if model is not None and not isinstance(model, str):
        if overrides:
            raise ValueError("overrides apply to a model id, not to a ready provider")
        return model
    model_id = model or os.environ.get("AGENTSTREAM_MODEL") or DEFAULT_MODEL
    prefix, name = parse_model_id(model_id)
    if prefix == "demo":
        demo: Provider = importlib.import_module("agentstream.providers.demo").demo_provider()
        return demo
    if prefix == "scripted":
        scripted = importlib.import_module("agentstream.providers.scripted")
        script: Provider = scripted.ScriptedProvider.from_file(name)
        return script
    spec = find_spec(prefix)
    assert spec is not None  # parse_model_id accepted it
    made: Provider = spec.make(name, **overrides)
    return made


def missing_key(model_id: str) -> str | None:
    """What to set when ``model_id``'s provider needs an API key the environment lacks (the
    server warns about it at start-up); ``None`` when nothing is missing or no key is needed."""
    prefix, _ = parse_model_id(model_id)
    spec = find_spec(prefix)
    return spec.missing_key() if spec is not None else None


# --- the registry -------------------------------------------------------------------------


Source = Literal["configured", "discovered", "agent"]
"""Where a listed model comes from: the configuration (``AGENTSTREAM_MODELS``, the default),
a server that reported it, or the agent itself (its own provider, its offered models)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelInfo:
    """One model a deployment offers. ``id`` is what :func:`resolve_provider` takes."""

    id: str
    display_name: str
    provider: str
    model: str
    default: bool = False
    source: Source = "configured"


def _label(provider: str) -> str:
    spec = find_spec(provider)
    return spec.label if spec is not None else provider


def model_info(entry: str, *, source: Source = "configured") -> ModelInfo:
    """``"openai:gpt-4.1-mini"``, optionally ``"...=GPT-4.1 mini"``, as a :class:`ModelInfo`."""
    model_id, _, display = entry.partition("=")
    prefix, name = parse_model_id(model_id)
    if not display.strip():
        if prefix == "demo":
            display = "Demo (offline, scripted)"
        elif prefix == "scripted":
            display = f"Scripted: {Path(name).stem}"
        else:
            display = f"{name} ({_label(prefix)})"
    canonical = "demo" if prefix == "demo" else f"{prefix}:{name}"
    return ModelInfo(
        id=canonical, display_name=display.strip(), provider=prefix, model=name, source=source
    )


def default_model_id(first_configured: str | None = None) -> str:
    """The model of an agent that names none: ``$AGENTSTREAM_MODEL``, else the first of
    ``$AGENTSTREAM_MODELS``, else the offline ``demo``."""
    if first_configured is None:
        configured = _split_env(os.environ.get("AGENTSTREAM_MODELS"))
        first_configured = configured[0].partition("=")[0] if configured else None
    return os.environ.get("AGENTSTREAM_MODEL") or first_configured or DEFAULT_MODEL


def _split_env(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class ModelRegistry:
    """The models on offer. ``configured`` defaults to ``$AGENTSTREAM_MODELS``; the default
    model to ``default``, else :func:`default_model_id` (it is always listed). With
    ``discover``, Ollama (``ollama_host``/``$OLLAMA_HOST``/local) and an OpenAI-compatible
    server (``openai_base_url``/``$OPENAI_BASE_URL``) are asked for their models within
    ``discovery_timeout`` seconds; answers are kept for ``cache_ttl`` seconds."""

    def __init__(
        self,
        configured: Iterable[str | ModelInfo] | None = None,
        *,
        default: str | None = None,
        discover: bool = True,
        discovery_timeout: float = 2.0,
        cache_ttl: float = 60.0,
        ollama_host: str | None = None,
        openai_base_url: str | None = None,
        openai_api_key: str | None = None,
    ) -> None:
        if configured is None:
            configured = _split_env(os.environ.get("AGENTSTREAM_MODELS"))
        entries = configured
        self._configured = [e if isinstance(e, ModelInfo) else model_info(e) for e in entries]
        # The same rule as ``Agent.model_id`` for an agent without a model, so the list
        # marks the model the server actually uses.
        first = self._configured[0].id if self._configured else None
        self.default_id = model_info(default or default_model_id(first)).id
        if all(m.id != self.default_id for m in self._configured):
            self._configured.insert(0, model_info(self.default_id))
        self.discover = discover
        self.discovery_timeout = discovery_timeout
        self.cache_ttl = cache_ttl
        self._discovery_options: dict[str, dict[str, Any]] = {
            "ollama": {"host": ollama_host},
            "openai": {"base_url": openai_base_url, "api_key": openai_api_key},
        }
        self._discovered: list[ModelInfo] = []
        self._discovered_at: float | None = None

    async def list_models(self) -> list[ModelInfo]:
        """Configured models first, then discovered ones not configured; one is ``default``."""
        if self.discover and not self._fresh():
            self._discovered = await self._discover()
            self._discovered_at = time.monotonic()
        return self._known()

    def resolve(self, id_or_name: str) -> ModelInfo | None:
        """A listed model by id (``openai:gpt-4.1-mini``) or by bare model name
        (``gpt-4.1-mini``, as the data playground sends) when exactly one listed model has it.
        Uses the last discovery; call :meth:`list_models` first to refresh it."""
        wanted = id_or_name.strip()
        known = self._known()
        for info in known:
            if info.id == wanted:
                return info
        matches = [info for info in known if info.model == wanted]
        return matches[0] if len(matches) == 1 else None

    def _known(self) -> list[ModelInfo]:
        seen: set[str] = set()
        out: list[ModelInfo] = []
        for info in (*self._configured, *self._discovered):
            if info.id not in seen:
                seen.add(info.id)
                out.append(replace(info, default=info.id == self.default_id))
        return out

    def _fresh(self) -> bool:
        return (
            self._discovered_at is not None
            and time.monotonic() - self._discovered_at < self.cache_ttl
        )

    async def _discover(self) -> list[ModelInfo]:
        specs = [spec for spec in provider_specs() if spec.discover is not None]
        results = await asyncio.gather(*(self._guard(spec) for spec in specs))
        found = [info for infos in results for info in infos]
        return sorted(found, key=lambda info: (info.provider, info.model))

    async def _guard(self, spec: ProviderSpec) -> list[ModelInfo]:
        options = self._discovery_options.get(spec.prefix, {})
        try:
            async with asyncio.timeout(self.discovery_timeout):
                names = await load_object(spec.discover)(options, self.discovery_timeout)
        except Exception as exc:  # unreachable servers are normal: they are just not listed
            log.debug("model discovery from %s failed: %s", spec.prefix, type(exc).__name__)
            return []
        return [model_info(f"{spec.prefix}:{name}", source="discovered") for name in names]
