"""Finding the user's agent from ``module:attribute``, the way ``uvicorn main:app`` does."""

from __future__ import annotations

import importlib
import os
import sys

from agentstream.agent import Agent

__all__ = ["AgentLoadError", "load_agent"]


class AgentLoadError(Exception):
    pass


def load_agent(spec: str | None) -> Agent:
    """Import ``module:attribute`` (an :class:`Agent` or a function returning one) with the
    current directory on the import path. ``None`` gives the built-in demo agent."""
    if not spec:
        from agentstream.demo import demo_agent

        return demo_agent()
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AgentLoadError(f"expected 'module:attribute', got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentLoadError(f"cannot import {module_name!r}: {exc}") from exc
    try:
        found = getattr(module, attribute)
    except AttributeError:
        raise AgentLoadError(f"{module_name!r} has no attribute {attribute!r}") from None
    if not isinstance(found, Agent) and callable(found):
        found = found()
    if not isinstance(found, Agent):
        raise AgentLoadError(f"{spec!r} is a {type(found).__name__}, not an Agent")
    return found
