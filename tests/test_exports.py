"""The public API: exactly these names, each importable and documented.

A name added to a package's ``__all__`` is a promise to users (and a page of the API
reference); a name removed breaks their imports. Both should be deliberate, so both fail here.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC = {
    "agentstream": [
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
    ],
    "agentstream.attachments": [
        "MAX_IMAGE_PIXELS",
        "Attachment",
        "AttachmentKind",
        "AttachmentLimits",
        "BlobStore",
        "FileBlobs",
        "kind_of",
        "sniff",
    ],
    "agentstream.errors": [
        "AgentLoadError",
        "AgentstreamError",
        "AttachmentNotFound",
        "AuthError",
        "BrokerUnavailable",
        "ConfigurationError",
        "ContextOverflow",
        "ConversationBusy",
        "ConversationNotFound",
        "Draining",
        "ErrorKind",
        "Forbidden",
        "InvalidArguments",
        "InvalidConversationId",
        "InvalidBranch",
        "InvalidCursor",
        "LimitExceeded",
        "MessageNotFound",
        "ModelUnavailable",
        "NotFound",
        "ProviderError",
        "RefusedRequest",
        "RunNotFound",
        "SettingsError",
        "StoreNotMigrated",
        "TooLarge",
        "Unavailable",
        "UnknownDialect",
        "UnknownRun",
        "UnsupportedMediaType",
        "ViewNotFound",
    ],
    "agentstream.tools": [
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
    ],
    "agentstream.chat": [
        "ACTION_EXECUTED",
        "ActionCall",
        "ActionError",
        "ActionFailed",
        "CJK",
        "CONTEXT_LAST_LAYOUT",
        "CYRILLIC",
        "ChatConfig",
        "ChatHooks",
        "ClientAction",
        "ContextField",
        "ContextType",
        "DEFAULT_LAYOUT",
        "GraphView",
        "LanguageGuard",
        "LocationKeys",
        "MissingAction",
        "PREVIEW_SENT",
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
    ],
    "agentstream.providers": [
        "ChatRequest",
        "MessageComplete",
        "MessageStart",
        "ModelInfo",
        "ModelProfile",
        "ModelProfiles",
        "ModelRegistry",
        "Prices",
        "Provider",
        "ProviderError",
        "ProviderEvent",
        "ReasoningChunk",
        "RetryPolicy",
        "TextChunk",
        "Timeouts",
        "ToolInputChunk",
        "ToolSpec",
        "ToolUseStart",
        "resolve_provider",
    ],
    "agentstream.server": ["ServerConfig", "Settings", "SettingsError", "create_app"],
    "agentstream.store": [
        "ActiveRun",
        "ConversationDetail",
        "ConversationNotFound",
        "ConversationPage",
        "ConversationSummary",
        "DisplayMessage",
        "DisplayPendingCall",
        "DisplayToolCall",
        "InvalidConversationId",
        "InvalidCursor",
        "SqlConversationStore",
        "StoreNotMigrated",
        "UnknownRun",
        "create_engine",
        "current_revision",
        "head_revision",
        "normalize_conversation_id",
        "resolve_database_url",
        "title_from_message",
        "upgrade",
    ],
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_the_public_names_are_exactly_these(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert sorted(module.__all__) == sorted(PUBLIC[module_name])
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name} is exported but missing"


def _written_docstring(obj: object) -> str:
    """The docstring someone wrote: a dataclass without one gets its signature as ``__doc__``."""
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""
    return doc


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_every_public_class_and_function_says_what_it_is_for(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert (module.__doc__ or "").strip(), f"{module_name} has no module docstring"
    undocumented = [
        name
        for name in module.__all__
        if (inspect.isclass(getattr(module, name)) or inspect.isfunction(getattr(module, name)))
        and not _written_docstring(getattr(module, name))
    ]
    assert undocumented == []


def test_every_error_the_library_raises_is_in_one_tree_and_keeps_its_old_names() -> None:
    """``except AgentstreamError`` catches them all, and the places users imported them from
    still give the same classes."""
    from agentstream import errors
    from agentstream.providers import ProviderError
    from agentstream.runs import BrokerUnavailable, RefusedRequest, RunNotFound
    from agentstream.server import SettingsError
    from agentstream.server.auth import AuthError, Forbidden
    from agentstream.server.dialects import UnknownDialect
    from agentstream.server.models import ModelUnavailable
    from agentstream.store import ConversationNotFound, InvalidCursor, StoreNotMigrated
    from agentstream.tools import InvalidArguments

    for name in errors.__all__:
        obj = getattr(errors, name)
        if inspect.isclass(obj):
            assert issubclass(obj, errors.AgentstreamError), name
    old_homes = [
        ProviderError,
        BrokerUnavailable,
        RefusedRequest,
        RunNotFound,
        SettingsError,
        AuthError,
        Forbidden,
        UnknownDialect,
        ModelUnavailable,
        ConversationNotFound,
        InvalidCursor,
        StoreNotMigrated,
        InvalidArguments,
    ]
    assert all(cls is getattr(errors, cls.__name__) for cls in old_homes)
    # Code written against the built-in bases keeps working.
    assert issubclass(errors.InvalidCursor, ValueError)
    assert issubclass(errors.ConversationNotFound, LookupError)
    assert issubclass(errors.BrokerUnavailable, RuntimeError)
    assert issubclass(errors.StoreNotMigrated, RuntimeError)
    assert issubclass(errors.SettingsError, ValueError)
