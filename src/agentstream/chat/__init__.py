"""Response semantics above the loop (workflow assistant, chat tray): the system prompt's sections,
the request context, scoped tools for pages, tabs and subtabs, payload types and markers, suggested
values and actions, server actions, tool history, diagnostics and the language guard.

Everything is configured in one :class:`ChatConfig` and plugged into the run pipeline by
:class:`ChatHooks`::

    runner = Runner(agent, hooks=ChatHooks(ChatConfig(pages=[...], payload_types=[...])))
"""

from agentstream.chat.actions import (
    ActionCall,
    ActionError,
    ActionFailed,
    ClientAction,
    MissingAction,
    ServerActions,
    UnknownAction,
)
from agentstream.chat.config import ChatConfig, ContextType
from agentstream.chat.fields import ContextField
from agentstream.chat.hooks import ACTION_EXECUTED, ChatHooks
from agentstream.chat.language import CJK, CYRILLIC, LanguageGuard, WritingSystem
from agentstream.chat.language import Script as Script  # its former name
from agentstream.chat.markers import (
    insert_tool_markers,
    strip_tool_markers,
    tool_history_payload,
    tool_marker,
)
from agentstream.chat.pages import LocationKeys, Page, Tab, page_scope
from agentstream.chat.payloads import (
    GraphView,
    PayloadAction,
    PayloadType,
    PayloadTypes,
    TableView,
)
from agentstream.chat.prompt import CONTEXT_LAST_LAYOUT, DEFAULT_LAYOUT, SystemPrompt
from agentstream.chat.suggestions import extract_suggestions
from agentstream.chat.toolhooks import (
    PREVIEW_SENT,
    field_names,
    first_sentence,
    inject_from_context,
    keep_fields,
    names_of,
    preview_interceptor,
    workflow_preview_data,
)

__all__ = [
    "ACTION_EXECUTED",
    "CJK",
    "CONTEXT_LAST_LAYOUT",
    "CYRILLIC",
    "DEFAULT_LAYOUT",
    "PREVIEW_SENT",
    "ActionCall",
    "ActionError",
    "ActionFailed",
    "ChatConfig",
    "ChatHooks",
    "ClientAction",
    "ContextField",
    "ContextType",
    "GraphView",
    "LanguageGuard",
    "LocationKeys",
    "MissingAction",
    "Page",
    "PayloadAction",
    "PayloadType",
    "PayloadTypes",
    "ServerActions",
    "SystemPrompt",
    "Tab",
    "TableView",
    "UnknownAction",
    "WritingSystem",
    "extract_suggestions",
    "field_names",
    "first_sentence",
    "inject_from_context",
    "insert_tool_markers",
    "keep_fields",
    "names_of",
    "page_scope",
    "preview_interceptor",
    "strip_tool_markers",
    "tool_history_payload",
    "tool_marker",
    "workflow_preview_data",
]
