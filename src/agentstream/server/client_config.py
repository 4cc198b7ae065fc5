"""``GET /api/chat/config``: what a browser UI needs before the first answer.

The application's name, its starter prompts, for each payload type its card title, how to
draw its data and the actions its card offers, the pages (with tabs and subtabs) a user may say
they are on and the context keys that carry it, the context fields to offer, and the other
sites an answer's links and ``open_url`` actions open without asking, all from
the :class:`~agentstream.chat.ChatConfig` the server was started with; and what files a
message may carry (``attachments``: their kinds and limits; ``null`` when the server keeps no
attachments, as without a store), so a UI offers only what will be taken. A server whose hooks
are not :class:`~agentstream.chat.ChatHooks` answers the same shape with nothing configured, so
a client needs no special case.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from agentstream.attachments.types import KINDS, AttachmentKind
from agentstream.chat import ChatConfig, ChatHooks
from agentstream.principal import Principal
from agentstream.runs import RunHooks
from agentstream.server.state import ServerContext

__all__ = ["PATH", "AttachmentPolicy", "ClientConfig", "chat_config_of", "router"]

PATH = "/api/chat/config"


class AttachmentPolicy(BaseModel):
    kinds: list[AttachmentKind]
    max_bytes: int
    """Per file."""
    max_files: int
    """Per message."""


class ClientConfig(BaseModel):
    app_name: str | None = None
    starter_prompts: list[str] = []
    payload_types: dict[str, dict[str, Any]] = {}
    pages: list[dict[str, Any]] = []
    location_keys: dict[str, str] = {
        "page": "current_page",
        "tab": "active_tab",
        "subtab": "active_subtab",
    }
    context_fields: list[dict[str, Any]] = []
    trusted_origins: list[str] = []
    confirm_links: bool = False
    attachments: AttachmentPolicy | None = None


def chat_config_of(hooks: RunHooks) -> ChatConfig | None:
    """The chat configuration behind ``hooks``, when they are the chat's."""
    return hooks.config if isinstance(hooks, ChatHooks) else None


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=["web UI"])
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]
    config = chat_config_of(server.runner.hooks)
    answer = ClientConfig.model_validate(config.client_view()) if config else ClientConfig()
    if server.runner.attachments is not None:
        limits = server.settings.attachments
        answer.attachments = AttachmentPolicy(
            kinds=list(KINDS),
            max_bytes=limits.max_file_bytes,
            max_files=limits.max_files_per_message,
        )

    @api.get(PATH, summary="The app's name, starter prompts and payload cards, for a chat UI")
    async def client_config(principal: CurrentPrincipal) -> ClientConfig:
        return answer

    return api
