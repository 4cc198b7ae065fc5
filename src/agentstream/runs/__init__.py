"""The run pipeline between a dialect and the agent loop: store, response hooks, cancel."""

from agentstream.errors import BrokerUnavailable, RunNotFound
from agentstream.runs.broker import LogEnd, RunBroker
from agentstream.runs.hooks import NoHooks, Preparation, RunHooks
from agentstream.runs.local_broker import LocalBroker
from agentstream.runs.reading import HistoryReading
from agentstream.runs.redis_broker import RedisBroker
from agentstream.runs.request import (
    ActionRequest,
    Branch,
    ProtocolOptions,
    RefusedRequest,
    RunRequest,
)
from agentstream.runs.runner import Runner
from agentstream.runs.session import RunSession
from agentstream.runs.store import (
    ConversationNotFound,
    ConversationStore,
    InterruptedRuns,
    StartedRun,
)
from agentstream.runs.titles import TitleWriter, model_titles

__all__ = [
    "ActionRequest",
    "Branch",
    "BrokerUnavailable",
    "ConversationNotFound",
    "ConversationStore",
    "HistoryReading",
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
