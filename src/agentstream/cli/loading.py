"""Finding the user's agent (and its chat and server configurations) from
``module:attribute``, the way ``uvicorn main:app`` does.

Every command that loads an agent (``serve``, ``chat``, ``models``) loads it here, so what the
command line promises holds for all of them: ``$AGENTSTREAM_MODEL`` replaces the model of the
agent loaded, a model id nothing can serve is one line naming it, and each application gets a
name (:func:`app_name`) for what it keeps of its own, such as its conversation database.
"""

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

__all__ = [
    "AgentLoadError",
    "app_name",
    "check_model",
    "load_agent",
    "load_hooks",
    "load_object",
    "load_server",
]

MODEL_ENV = "AGENTSTREAM_MODEL"


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
    """The :class:`Agent` at ``module:attribute`` (or a function returning one), on
    ``$AGENTSTREAM_MODEL`` when that is set, whatever model the code names. ``None`` gives the
    built-in demo agent. A model id that cannot be served is an :class:`AgentLoadError`."""
    if not spec:
        from agentstream.demo import demo_agent

        agent = demo_agent()
    else:
        found = load_object(spec)
        if not isinstance(found, Agent):
            raise AgentLoadError(f"{spec!r} is {_a(type(found).__name__)}, not an Agent")
        agent = found
    override = os.environ.get(MODEL_ENV, "").strip()
    if override:
        agent.model = override
    check_model(agent, source=f"${MODEL_ENV}" if override else None)
    return agent


def check_model(agent: Agent, model: str | None = None, *, source: str | None = None) -> None:
    """Make ``agent``'s provider for ``model`` (default: its own) now, so that an id no
    provider takes, or a script file that cannot be read, is one :class:`AgentLoadError`
    naming it (and where it came from: ``source``) before anything starts, rather than a
    traceback or a first message that fails. A missing API key is not checked here: the
    provider asks for it on its first request."""
    try:
        agent.provider(model)
    except ValueError as exc:
        where = f" (from {source})" if source else ""
        raise AgentLoadError(f"{exc}{where}") from None


def app_name(spec: str | None) -> str | None:
    """What an application served from ``module:attribute`` is called where it keeps things
    of its own (``myapp:agent`` -> ``myapp.agent``); ``None`` for the built-in demo."""
    if not spec:
        return None
    module_name, _, attribute = spec.partition(":")
    return f"{module_name}.{attribute}" if attribute else module_name


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


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
    raise AgentLoadError(f"{spec!r} is {_a(type(found).__name__)}, not a ChatConfig or RunHooks")


def load_server(spec: str | None) -> ServerConfig | None:
    """The :class:`~agentstream.server.config.ServerConfig` at ``spec`` (what the application
    adds to the server: mounted apps, its sessions, its sign-in page), or ``None``."""
    if spec is None:
        return None
    found = load_object(spec)
    if not isinstance(found, ServerConfig):
        raise AgentLoadError(f"{spec!r} is {_a(type(found).__name__)}, not a ServerConfig")
    return found
