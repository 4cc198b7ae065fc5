"""How a file comes in, by whatever route: written to a staging file as it arrives (refused
at the first byte over the limit), its type read from its content, kept as the caller's.

``POST /api/attachments`` feeds it a multipart body (:mod:`agentstream.server.uploads`); the
AI SDK and AG-UI dialects feed it the files their messages carry inline
(:mod:`agentstream.server.dialects.files`). Either way the same checks apply, once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentstream.attachments.limits import AttachmentLimits
from agentstream.attachments.sniffing import sniff
from agentstream.attachments.staging import Staging, staging
from agentstream.attachments.types import Attachment
from agentstream.principal import Principal
from agentstream.server.uploads import Received
from agentstream.store.attachments import SqlAttachments

__all__ = ["Intake"]


@dataclass(frozen=True, slots=True)
class Intake:
    """Files coming in, kept in ``attachments`` (see the module's docstring). What the run
    pipeline needs of attachments too: the caller's by id, their content, and the files its
    tools make (:class:`~agentstream.attachments.owned.OwnedAttachments`,
    :class:`~agentstream.attachments.owned.AttachmentKeeper`)."""

    attachments: SqlAttachments
    staging_dir: Path
    limits: AttachmentLimits

    async def keep(
        self, principal: Principal, fill: Callable[[Staging], Awaitable[Received]]
    ) -> Attachment:
        """Keep the file ``fill`` writes into the staging file it is given (returning what
        the sender said of it) as ``principal``'s."""
        async with staging(self.staging_dir, limit=self.limits.max_file_bytes) as stage:
            received = await fill(stage)
            staged = stage.staged()
            media_type = await asyncio.to_thread(
                sniff, stage.file, received.name, received.declared_type
            )
            return await self.attachments.save(
                principal, name=received.name, media_type=media_type, staged=staged
            )

    async def resolve(self, principal: Principal, ids: Sequence[str]) -> tuple[Attachment, ...]:
        return await self.attachments.resolve(principal, ids)

    async def content(self, attachment: Attachment) -> bytes:
        return await self.attachments.content(attachment)

    async def keep_bytes(
        self, principal: Principal, data: bytes, *, name: str, declared: str | None
    ) -> Attachment:
        """Keep ``data`` (a file a message carried inline, or a tool made) as
        ``principal``'s."""

        async def fill(stage: Staging) -> Received:
            await stage.write(data)
            return Received(name=name, declared_type=declared)

        return await self.keep(principal, fill)
