"""agentstream: stream tool-using AI agents into the chat panels of real applications."""

from agentstream.agent import Agent, AgentRun, CancelToken, RunInput
from agentstream.events import Payload, RunEvent
from agentstream.principal import Principal
from agentstream.tools import Progress, Tool, ToolContext, ToolResult, Toolset, View, tool

__all__ = [
    "Agent",
    "AgentRun",
    "CancelToken",
    "Payload",
    "Principal",
    "Progress",
    "RunEvent",
    "RunInput",
    "Tool",
    "ToolContext",
    "ToolResult",
    "Toolset",
    "View",
    "tool",
]
