"""What the run pipeline needs of the attachment store: the caller's attachments by id (the
runner, before anything is stored), and their content (the agent loop, when it builds a
model request)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agentstream.attachments.types import Attachment
from agentstream.principal import Principal

__all__ = ["AttachmentContent", "AttachmentKeeper", "OwnedAttachments"]


class AttachmentContent(Protocol):
    """The content of attachments, for a model request that carries them."""

    async def content(self, attachment: Attachment) -> bytes:
        """The whole content of ``attachment``."""
        ...


@runtime_checkable
class AttachmentKeeper(Protocol):
    """Keeps files a run produces (a tool's chart or screenshot) as the caller's."""

    async def keep_bytes(
        self, principal: Principal, data: bytes, *, name: str, declared: str | None
    ) -> Attachment:
        """Keep ``data`` as ``principal``'s attachment, checked as an upload is."""
        ...


class OwnedAttachments(AttachmentContent, Protocol):
    """Attachments by id, for their owner only (see
    :class:`~agentstream.store.attachments.SqlAttachments`)."""

    async def resolve(self, principal: Principal, ids: Sequence[str]) -> tuple[Attachment, ...]:
        """``principal``'s attachments ``ids`` in that order;
        :class:`~agentstream.errors.AttachmentNotFound` when any is not theirs."""
        ...
