"""Finding the user's agent (and its chat and server configurations) from
``module:attribute``, the way ``uvicorn main:app`` does."""

from __future__ import annotations

import importlib
import inspect
import os
import sys

from agentstream.agent import Agent
from agentstream.chat import ChatConfig, ChatHooks
from agentstream.errors import AgentLoadError
from agentstream.runs import RunHooks
from agentstream.server.config import ServerConfig

__all__ = ["AgentLoadError", "load_agent", "load_hooks", "load_object", "load_server"]


def load_object(spec: str) -> object:
    """Import ``module:attribute`` with the current directory on the import path; a function
    is called to make the object."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise AgentLoadError(f"expected 'module:attribute', got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = ""
        if isinstance(exc, ModuleNotFoundError) and exc.name == module_name.split(".")[0]:
            # The top-level package itself is missing: usually the wrong directory.
            hint = f" (modules are imported from the current directory, {os.getcwd()})"
        raise AgentLoadError(f"cannot import {module_name!r}: {exc}{hint}") from exc
    try:
        found: object = getattr(module, attribute)
    except AttributeError:
        raise AgentLoadError(f"{module_name!r} has no attribute {attribute!r}") from None
    if inspect.isfunction(found):
        found = found()
    return found


def load_agent(spec: str | None) -> Agent:
    """The :class:`Agent` at ``module:attribute`` (or a function returning one). ``None``
    gives the built-in demo agent."""
    if not spec:
        from agentstream.demo import demo_agent

        return demo_agent()
    found = load_object(spec)
    if not isinstance(found, Agent):
        raise AgentLoadError(f"{spec!r} is a {type(found).__name__}, not an Agent")
    return found


def load_hooks(spec: str | None, *, demo: bool = False) -> RunHooks:
    """``ChatHooks`` for the ``ChatConfig`` at ``spec``, the ``RunHooks`` there, or the
    default ``ChatHooks()``, the same as ``create_app``'s (the demo's configuration when
    serving the demo)."""
    if spec is None:
        if demo:
            from agentstream.demo import demo_chat

            return ChatHooks(demo_chat())
        return ChatHooks()
    found = load_object(spec)
    if isinstance(found, ChatConfig):
        return ChatHooks(found)
    if isinstance(found, RunHooks):
        return found
    raise AgentLoadError(f"{spec!r} is a {type(found).__name__}, not a ChatConfig or RunHooks")


def load_server(spec: str | None) -> ServerConfig | None:
    """The :class:`~agentstream.server.config.ServerConfig` at ``spec`` (what the application
    adds to the server: mounted apps, its sessions, its sign-in page), or ``None``."""
    if spec is None:
        return None
    found = load_object(spec)
    if not isinstance(found, ServerConfig):
        raise AgentLoadError(f"{spec!r} is a {type(found).__name__}, not a ServerConfig")
    return found
