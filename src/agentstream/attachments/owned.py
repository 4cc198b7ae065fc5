"""What the run pipeline needs of the attachment store: the caller's attachments by id, and
their content when a provider builds its request."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentstream.attachments.types import Attachment
from agentstream.principal import Principal

__all__ = ["OwnedAttachments"]


class OwnedAttachments(Protocol):
    """Attachments by id, for their owner only (see
    :class:`~agentstream.store.attachments.SqlAttachments`)."""

    async def resolve(self, principal: Principal, ids: Sequence[str]) -> tuple[Attachment, ...]:
        """``principal``'s attachments ``ids`` in that order;
        :class:`~agentstream.errors.AttachmentNotFound` when any is not theirs."""
        ...

    async def content(self, attachment: Attachment) -> bytes:
        """The whole content of ``attachment``."""
        ...
