"""Which providers exist: one declaration each, built in or installed as a plugin.

A :class:`ProviderSpec` says everything the rest of the package needs to know about a vendor
without importing its SDK: the model-id prefix and its aliases, the display label, where the
provider class lives (imported on first use), how to list its models, and the API key it needs
(and so how to say it is missing). The registry, the CLI and the server read these
declarations; nothing else keeps a list of vendors.

Third-party packages add providers through the ``agentstream.providers`` entry-point group::

    [project.entry-points."agentstream.providers"]
    foo = "agentstream_foo:PROVIDER"   # a ProviderSpec (or a function returning one)

so ``pip install agentstream-foo`` makes ``foo:<model>`` ids work. A built-in prefix cannot be
taken over; a plugin that fails to load is logged and skipped.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import Any

__all__ = [
    "ENTRY_POINT_GROUP",
    "ProviderSpec",
    "builtin_specs",
    "find_spec",
    "load_object",
    "openai_needs_key",
    "provider_specs",
    "reload_plugins",
]

log = logging.getLogger("agentstream.providers")

ENTRY_POINT_GROUP = "agentstream.providers"

Discover = Callable[[Mapping[str, Any], float], Awaitable[list[str]]]
"""``discover(options, timeout)``: the model names a server offers (``options`` are the
registry's settings for this provider, e.g. ``base_url``, ``api_key``, ``host``)."""


def load_object(reference: str | Any) -> Any:
    """``"package.module:attribute"`` imported; anything else returned as is."""
    if not isinstance(reference, str):
        return reference
    module_name, _, attribute = reference.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found


def _always(_base_url: str | None) -> bool:
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """One provider. ``factory`` (a callable or ``"module:attribute"``) is called as
    ``factory(model_name, **overrides)``. ``key_env`` lists the environment variables that may
    hold the key, the first one being the one to suggest; ``needs_key(base_url)`` says whether
    a key is required for that base URL (``base_url_env`` gives the default), so a local
    OpenAI-compatible server can go without."""

    prefix: str
    label: str
    factory: str | Callable[..., Any]
    aliases: tuple[str, ...] = ()
    key_env: tuple[str, ...] = ()
    base_url_env: str | None = None
    needs_key: Callable[[str | None], bool] = _always
    discover: str | Discover | None = None

    def make(self, model: str, **overrides: Any) -> Any:
        """The provider for ``model`` (the part of the id after the prefix)."""
        factory = load_object(self.factory)
        try:
            return factory(model, **overrides)
        except TypeError as exc:
            raise ValueError(f"{self.prefix}: unsupported option ({exc})") from None

    def missing_key(self, api_key: str | None = None, base_url: str | None = None) -> str | None:
        """A one-line message naming the variable to set when no key is configured (in the
        argument or the environment) and this base URL needs one; ``None`` when all is well."""
        if not self.key_env or api_key:
            return None
        if any(os.environ.get(name) for name in self.key_env):
            return None
        if base_url is None and self.base_url_env:
            base_url = os.environ.get(self.base_url_env) or None
        if not self.needs_key(base_url):
            return None
        return f"{self.label}: no API key: set {self.key_env[0]}"


def openai_needs_key(base_url: str | None) -> bool:
    """OpenAI itself needs a key; most OpenAI-compatible servers (vLLM, llama.cpp, LM Studio,
    Ollama's ``/v1``) ignore it."""
    return base_url is None or "api.openai.com" in base_url


_OPENAI = ProviderSpec(
    prefix="openai",
    label="OpenAI",
    factory="agentstream.providers.openai:OpenAIProvider",
    discover="agentstream.providers.discovery:openai_models",
    key_env=("OPENAI_API_KEY",),
    base_url_env="OPENAI_BASE_URL",
    needs_key=openai_needs_key,
)

_BUILTIN: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        prefix="anthropic",
        label="Anthropic",
        factory="agentstream.providers.anthropic:AnthropicProvider",
        key_env=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    ),
    _OPENAI,
    # Same key and base URL as openai:; compatible servers' model lists are Chat Completions'.
    replace(
        _OPENAI,
        prefix="openai-responses",
        label="OpenAI Responses",
        factory="agentstream.providers.openai_responses:OpenAIResponsesProvider",
        discover=None,
    ),
    ProviderSpec(
        prefix="google",
        label="Gemini",
        aliases=("gemini",),
        factory="agentstream.providers.google:GoogleProvider",
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    ),
    ProviderSpec(
        prefix="ollama",
        label="Ollama",
        factory="agentstream.providers.ollama:OllamaProvider",
        discover="agentstream.providers.discovery:ollama_models",
    ),
)


def builtin_specs() -> tuple[ProviderSpec, ...]:
    return _BUILTIN


_plugins: tuple[ProviderSpec, ...] | None = None


def _load_plugins() -> tuple[ProviderSpec, ...]:
    taken = {name for spec in _BUILTIN for name in (spec.prefix, *spec.aliases)}
    taken |= {"demo", "scripted"}
    found: list[ProviderSpec] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            spec = entry.load()
            if callable(spec) and not isinstance(spec, ProviderSpec):
                spec = spec()
            if not isinstance(spec, ProviderSpec):
                raise TypeError(f"expected a ProviderSpec, got {type(spec).__name__}")
        except Exception as exc:
            log.warning("provider plugin %r failed to load: %s", entry.value, exc)
            continue
        names = (spec.prefix, *spec.aliases)
        if any(name in taken for name in names):
            log.warning("provider plugin %r: prefix %r is already taken", entry.value, spec.prefix)
            continue
        taken.update(names)
        found.append(spec)
    return tuple(found)


def reload_plugins() -> None:
    """Forget the plugins found so far (they are looked up again on next use), e.g. after a
    distribution was installed at run time."""
    global _plugins
    _plugins = None


def provider_specs() -> tuple[ProviderSpec, ...]:
    """Built-in providers, then installed plugins (looked up once)."""
    global _plugins
    if _plugins is None:
        _plugins = _load_plugins()
    return (*_BUILTIN, *_plugins)


def find_spec(prefix: str) -> ProviderSpec | None:
    """The provider with this prefix or alias."""
    for spec in provider_specs():
        if prefix == spec.prefix or prefix in spec.aliases:
            return spec
    return None
