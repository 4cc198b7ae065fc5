"""Asking a server which models it offers, for the providers whose declaration says they can.

Each function takes the registry's settings for that provider and a timeout (``wait``, seconds) and
returns model names; the SDK is imported only when discovery runs. OpenAI's own API is not asked: it
lists every model the account can see, most of which cannot chat, so only an OpenAI-compatible
server (a base URL other than OpenAI's) is."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agentstream.providers.catalog import openai_needs_key

__all__ = ["ollama_models", "openai_models"]


async def ollama_models(options: Mapping[str, Any], wait: float) -> list[str]:
    import ollama

    client = ollama.AsyncClient(host=options.get("host"), timeout=wait)
    try:
        listing = await client.list()
    finally:
        await client._client.aclose()
    return sorted(m.model for m in listing.models if m.model)


async def openai_models(options: Mapping[str, Any], wait: float) -> list[str]:
    base_url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if openai_needs_key(base_url):  # OpenAI itself: its list is mostly models that cannot chat
        return []
    import openai

    key = options.get("api_key") or os.environ.get("OPENAI_API_KEY") or "not-needed"
    client = openai.AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=wait)
    try:
        return sorted([model.id async for model in client.models.list()])
    finally:
        await client.close()
