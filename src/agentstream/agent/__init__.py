"""The agent and its loop: stream a turn, run tools, feed results back, repeat."""

from agentstream.agent.agent import Agent
from agentstream.agent.budget import ContextLimits
from agentstream.agent.inputs import AnswerCheck, CancelToken, Retry, RunInput
from agentstream.agent.loop import MAX_TURNS_MESSAGE
from agentstream.agent.run import AgentRun
from agentstream.agent.summaries import ContextSummary

__all__ = [
    "MAX_TURNS_MESSAGE",
    "Agent",
    "AgentRun",
    "AnswerCheck",
    "CancelToken",
    "ContextLimits",
    "ContextSummary",
    "Retry",
    "RunInput",
]
