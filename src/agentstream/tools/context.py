"""What a running tool knows about the request it serves."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentstream.attachments.owned import AttachmentKeeper
from agentstream.attachments.types import Attachment
from agentstream.errors import ConfigurationError
from agentstream.principal import Principal
from agentstream.tools.results import Progress

__all__ = ["ToolContext"]


def _discard(_: Progress) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """Passed to a tool whose first parameter is annotated ``ToolContext``.

    ``token`` is the caller's raw bearer token, for tools that call downstream APIs on the user's
    behalf (the workflow assistant forwards it verbatim); never log it. ``context`` is the request's
    context object as the client sent it. ``report`` is safe to call from any thread, so sync tools
    running in a worker thread can report progress too.
    """

    principal: Principal
    run_id: str
    call_id: str
    tool_name: str
    conversation_id: str | None = None
    context: Any = None
    options: Mapping[str, Any] = field(default_factory=dict)
    """Request options a tool may honour, e.g. ``rag_enabled`` from the data playground."""
    state: dict[str, Any] = field(default_factory=dict)
    """The shared state as the call found it (the page's and the agent's, see
    :mod:`agentstream.state`): the tool's own copy, to read and change in place. When the call
    succeeds, what it changed goes to the page as a patch and is stored with the
    conversation; a call that fails changes nothing."""
    _sink: Callable[[Progress], None] = field(default=_discard, repr=False)
    _keeper: AttachmentKeeper | None = field(default=None, repr=False)

    @property
    def user_id(self) -> str:
        return self.principal.user_id

    @property
    def token(self) -> str | None:
        return self.principal.token

    def report(
        self,
        stage: str | None = None,
        message: str | None = None,
        fraction: float | None = None,
        data: Any = None,
    ) -> None:
        """Report progress; the client sees it as a tool progress event."""
        self._sink(Progress(stage=stage, message=message, fraction=fraction, data=data))

    async def attach(self, data: bytes, *, name: str, media_type: str | None = None) -> Attachment:
        """Keep a file the tool made (a chart, a screenshot) as the caller's attachment, for
        the tool to return in :attr:`ToolResult.attachments`: the model then reads it beside
        the result's text. Checked as an upload is (its type read from its content).
        :class:`~agentstream.errors.ConfigurationError` when the run keeps no attachments."""
        if self._keeper is None:
            raise ConfigurationError("this run keeps no attachments (the server has no store)")
        return await self._keeper.keep_bytes(self.principal, data, name=name, declared=media_type)
