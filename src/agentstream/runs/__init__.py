"""The run pipeline between a dialect and the agent loop: store, response hooks, cancel."""

from agentstream.runs.broker import (
    BrokerUnavailable,
    LocalBroker,
    LogEnd,
    RedisBroker,
    RunBroker,
    RunNotFound,
)
from agentstream.runs.hooks import NoHooks, Preparation, RunHooks
from agentstream.runs.request import ActionRequest, ProtocolOptions, RefusedRequest, RunRequest
from agentstream.runs.runner import Runner, RunSession
from agentstream.runs.store import (
    ConversationNotFound,
    ConversationStore,
    InterruptedRuns,
    StartedRun,
)
from agentstream.runs.titles import TitleWriter, model_titles

__all__ = [
    "ActionRequest",
    "BrokerUnavailable",
    "ConversationNotFound",
    "ConversationStore",
    "InterruptedRuns",
    "LocalBroker",
    "LogEnd",
    "NoHooks",
    "RefusedRequest",
    "Preparation",
    "RedisBroker",
    "RunBroker",
    "RunHooks",
    "RunNotFound",
    "ProtocolOptions",
    "RunRequest",
    "RunSession",
    "Runner",
    "StartedRun",
    "TitleWriter",
    "model_titles",
]
