"""Model ids to providers, and the list of models a deployment offers.

A model id is ``<provider>:<model>``: ``anthropic:claude-sonnet-4-5``, ``openai:gpt-4.1-mini``,
``google:gemini-2.5-flash``, ``ollama:qwen3:14b`` (everything after the first colon is the
vendor's model name), ``scripted:<path to a JSON/YAML script>``, or ``demo`` (the offline
scripted demo). :func:`resolve_provider` makes the provider; vendor modules are imported only
when asked for, so a deployment that uses one vendor never imports the other SDKs.

:class:`ModelRegistry` is the list behind ``agentstream models`` and 001's ``listModels()``:
the configured models (code, or ``AGENTSTREAM_MODELS``, comma-separated, each optionally
``id=Display name``) plus, where reachable, the models an Ollama server and an
OpenAI-compatible server (``OPENAI_BASE_URL``) report, asked with a short timeout and cached
briefly. OpenAI's own API is not asked: it lists every model the account can see, most of
which cannot chat.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from agentstream.providers.base import Provider

__all__ = [
    "DEFAULT_MODEL",
    "ModelInfo",
    "ModelRegistry",
    "model_info",
    "parse_model_id",
    "resolve_provider",
]

log = logging.getLogger("agentstream.providers")

DEFAULT_MODEL = "demo"

_VENDORS: Mapping[str, tuple[str, str, str]] = {
    # prefix: (module, class, label)
    "anthropic": ("agentstream.providers.anthropic", "AnthropicProvider", "Anthropic"),
    "openai": ("agentstream.providers.openai", "OpenAIProvider", "OpenAI"),
    "google": ("agentstream.providers.google", "GoogleProvider", "Gemini"),
    "ollama": ("agentstream.providers.ollama", "OllamaProvider", "Ollama"),
}
_PREFIXES = (*_VENDORS, "scripted", "demo")


def parse_model_id(model_id: str) -> tuple[str, str]:
    """``"ollama:qwen3:14b"`` → ``("ollama", "qwen3:14b")``; ``"demo"`` → ``("demo", "")``.
    Raises :class:`ValueError` with the accepted forms for anything else."""
    text = model_id.strip()
    if text == "demo":
        return "demo", ""
    prefix, sep, name = text.partition(":")
    if not sep or prefix not in _PREFIXES or not name.strip():
        raise ValueError(
            f"unknown model id {model_id!r}: expected 'demo' or '<provider>:<model>' with "
            f"provider one of {', '.join(p for p in _PREFIXES if p != 'demo')} "
            "(e.g. 'openai:gpt-4.1-mini')"
        )
    return prefix, name.strip()


def resolve_provider(model: str | Provider | None = None, **overrides: Any) -> Provider:
    """The provider for a model id (``None``: ``$AGENTSTREAM_MODEL``, else ``demo``).

    ``overrides`` go to the vendor provider's constructor: ``api_key``, ``base_url`` (``host``
    for Ollama), ``timeouts``, ``retry``, ``client``. A :class:`Provider` is returned as is.
    """
    if model is not None and not isinstance(model, str):
        if overrides:
            raise ValueError("overrides apply to a model id, not to a ready provider")
        return model
    model_id = model or os.environ.get("AGENTSTREAM_MODEL") or DEFAULT_MODEL
    prefix, name = parse_model_id(model_id)
    if prefix in ("demo", "scripted"):
        if prefix == "demo":
            demo: Provider = importlib.import_module("agentstream.providers.demo").demo_provider()
            return demo
        scripted = importlib.import_module("agentstream.providers.scripted")
        script: Provider = scripted.ScriptedProvider.from_file(name)
        return script
    module_name, class_name, _ = _VENDORS[prefix]
    cls = getattr(importlib.import_module(module_name), class_name)
    try:
        made: Provider = cls(name, **overrides)
    except TypeError as exc:
        raise ValueError(f"{prefix}: unsupported option ({exc})") from None
    return made


# --- the registry -------------------------------------------------------------------------


Source = Literal["configured", "discovered"]


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
    return _VENDORS[provider][2] if provider in _VENDORS else provider


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


def _split_env(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


class ModelRegistry:
    """The models on offer. ``configured`` defaults to ``$AGENTSTREAM_MODELS``; the default
    model to ``default``, else ``$AGENTSTREAM_MODEL``, else the first configured one (it is
    always listed). With ``discover``, Ollama (``ollama_host``/``$OLLAMA_HOST``/local) and an
    OpenAI-compatible server (``openai_base_url``/``$OPENAI_BASE_URL``) are asked for their
    models within ``discovery_timeout`` seconds; answers are kept for ``cache_ttl`` seconds."""

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
        default_id = default or os.environ.get("AGENTSTREAM_MODEL")
        if default_id:
            self.default_id = model_info(default_id).id
        elif self._configured:
            self.default_id = self._configured[0].id
        else:
            self.default_id = DEFAULT_MODEL
        if all(m.id != self.default_id for m in self._configured):
            self._configured.insert(0, model_info(self.default_id))
        self.discover = discover
        self.discovery_timeout = discovery_timeout
        self.cache_ttl = cache_ttl
        self._ollama_host = ollama_host
        self._openai_base_url = openai_base_url
        self._openai_api_key = openai_api_key
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
        (``gpt-4.1-mini``, as 001's playground sends) when exactly one listed model has it.
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
        results = await asyncio.gather(
            self._guard("ollama", self._ollama_models()),
            self._guard("openai", self._openai_models()),
        )
        return [info for found in results for info in found]

    async def _guard(self, source: str, probe: Any) -> list[ModelInfo]:
        try:
            async with asyncio.timeout(self.discovery_timeout):
                found: list[ModelInfo] = await probe
                return found
        except Exception as exc:  # unreachable servers are normal: they are just not listed
            log.debug("model discovery from %s failed: %s", source, type(exc).__name__)
            return []

    async def _ollama_models(self) -> list[ModelInfo]:
        import ollama

        client = ollama.AsyncClient(host=self._ollama_host, timeout=self.discovery_timeout)
        try:
            listing = await client.list()
        finally:
            await client._client.aclose()
        names = sorted(m.model for m in listing.models if m.model)
        return [model_info(f"ollama:{name}", source="discovered") for name in names]

    async def _openai_models(self) -> list[ModelInfo]:
        base_url = self._openai_base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url or "api.openai.com" in base_url:
            return []
        import openai

        key = self._openai_api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url, max_retries=0, timeout=self.discovery_timeout
        )
        try:
            ids = sorted([model.id async for model in client.models.list()])
        finally:
            await client.close()
        return [model_info(f"openai:{i}", source="discovered") for i in ids]
