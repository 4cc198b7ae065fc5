"""Tools: typed Python functions a model may call, and how they run.

``@tool`` declares one; :class:`Toolset` scopes them; :mod:`.execution` runs a call with
validation, timeouts, worker threads for sync code and progress reporting; a :class:`View`
draws a tool's result with an interactive page of its own (:mod:`.views`, MCP Apps).
"""

from agentstream.tools.context import ToolContext
from agentstream.tools.definition import InvalidArguments, Tool, tool
from agentstream.tools.results import Progress, ToolResult
from agentstream.tools.toolsets import Toolset, ToolSource, as_tool
from agentstream.tools.views import View

__all__ = [
    "InvalidArguments",
    "Progress",
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolSource",
    "Toolset",
    "View",
    "as_tool",
    "tool",
]
