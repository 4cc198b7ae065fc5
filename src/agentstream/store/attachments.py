"""Who uploaded which file: attachment metadata in the store's database, content in a blob
store (:mod:`agentstream.attachments.blobs`).

Like conversations, every read filters on owner *and* tenant in the statement itself, and an
attachment that is someone else's is :class:`~agentstream.errors.AttachmentNotFound`,
exactly as one that does not exist: read directly, or named in a message.

An upload becomes *referenced* when a message first names it (:func:`refer`, run inside the
transaction that stores the message, so an attachment swept away a moment earlier fails the
message instead of leaving it pointing at nothing). Uploads never referenced are removed
after a while by :meth:`SqlAttachments.sweep`, and their content with the last row that
names it.

Because :func:`refer` checks again, the lookup before a message is stored
(:meth:`SqlAttachments.resolve`) may answer from what this process saw of the caller's
attachments a moment ago (their uploads, their last messages): a row never changes, only
goes, and a user's next message usually names the file they just uploaded here. That spares
a message with a file a database read before its model call. A direct read
(:meth:`SqlAttachments.get`) always asks the database.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import delete, exists, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from agentstream.attachments.blobs import BlobStore
from agentstream.attachments.staging import Staged
from agentstream.attachments.types import Attachment
from agentstream.errors import AttachmentNotFound
from agentstream.ids import new_id
from agentstream.principal import Principal
from agentstream.store.engine import writer
from agentstream.store.models import ATTACHMENTS, utcnow

__all__ = ["NAME_LENGTH", "SqlAttachments", "refer"]

NAME_LENGTH = 255
_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
"""What an attachment id can look like (they are :func:`~agentstream.ids.new_id`'s)."""
_a = ATTACHMENTS.c
_COLUMNS = (_a.id, _a.name, _a.media_type, _a.size, _a.sha256)
RECENT = 4096
"""How many of their users' attachments a process remembers for :meth:`SqlAttachments.resolve`
(a few hundred bytes each)."""

_Key = tuple[str | None, str, str]
"""Tenant, owner and id: an attachment as its owner names it."""


def _owned(principal: Principal) -> tuple[Any, ...]:
    return (_a.owner_id == principal.user_id, _a.tenant_id == principal.tenant)


class SqlAttachments:
    """Attachments of the users of one database; content in ``blobs``."""

    def __init__(self, engine: AsyncEngine, blobs: BlobStore) -> None:
        self._engine = engine
        self.blobs = blobs
        self._recent: OrderedDict[_Key, Attachment] = OrderedDict()
        """Attachments this process saved or resolved lately, by owner (see the module's
        docstring)."""

    def _remember(self, principal: Principal, attachment: Attachment) -> None:
        recent = self._recent
        recent[(principal.tenant, principal.user_id, attachment.id)] = attachment
        if len(recent) > RECENT:
            recent.popitem(last=False)

    async def save(
        self, principal: Principal, *, name: str, media_type: str, staged: Staged
    ) -> Attachment:
        """Record an upload as ``principal``'s and keep its content (``staged`` may be moved
        away). The row is committed first: a sweep that looks for rows naming the content
        then finds this one and leaves the blob alone."""
        attachment = Attachment(
            id=new_id(),
            name=clean_name(name),
            media_type=media_type,
            size=staged.size,
            sha256=staged.sha256,
        )
        async with writer(self._engine).begin() as conn:
            await conn.execute(
                insert(ATTACHMENTS),
                {
                    "id": attachment.id,
                    "tenant_id": principal.tenant,
                    "owner_id": principal.user_id,
                    "name": attachment.name,
                    "media_type": media_type,
                    "size": staged.size,
                    "sha256": staged.sha256,
                    "created_at": utcnow(),
                    "referenced_at": None,
                },
            )
        try:
            await self.blobs.keep(staged.sha256, staged.path)
        except BaseException:
            # No row may name content that was never kept (a full disk, a cancelled request).
            async with writer(self._engine).begin() as conn:
                await conn.execute(delete(ATTACHMENTS).where(_a.id == attachment.id))
            raise
        self._remember(principal, attachment)
        return attachment

    async def get(self, principal: Principal, attachment_id: str) -> Attachment:
        """``principal``'s attachment ``attachment_id`` (:class:`AttachmentNotFound` for any
        other), as the database has it now."""
        (found,) = await self._read(principal, [attachment_id])
        return found

    async def resolve(self, principal: Principal, ids: Sequence[str]) -> tuple[Attachment, ...]:
        """``principal``'s attachments ``ids``, in that order, for a message about to be
        stored (which :func:`refer` checks again); :class:`AttachmentNotFound` when any is
        not theirs."""
        recent = self._recent
        tenant, owner = principal.tenant, principal.user_id
        known = [recent.get((tenant, owner, i)) for i in ids]
        if all(known):
            return tuple(a for a in known if a is not None)
        found = await self._read(principal, ids)
        for attachment in found:
            self._remember(principal, attachment)
        return found

    async def _read(self, principal: Principal, ids: Sequence[str]) -> tuple[Attachment, ...]:
        if not ids:
            return ()
        wanted = list(dict.fromkeys(ids))
        malformed = next((i for i in wanted if not _ID.fullmatch(i)), None)
        if malformed is not None:  # never one of ours (and NUL would upset PostgreSQL)
            raise AttachmentNotFound(malformed)
        async with self._engine.connect() as conn:
            rows = await conn.execute(
                select(*_COLUMNS).where(_a.id.in_(wanted), *_owned(principal))
            )
            found = {row.id: Attachment(**row._asdict()) for row in rows}
        missing = [i for i in wanted if i not in found]
        if missing:
            raise AttachmentNotFound(missing[0])
        return tuple(found[i] for i in ids)

    def read(self, attachment: Attachment) -> AsyncIterator[bytes]:
        """The content, a part at a time (``FileNotFoundError`` when it is gone)."""
        return self.blobs.read(attachment.sha256)

    async def opened(self, attachment: Attachment) -> AsyncIterator[bytes]:
        """The content, a part at a time, its first part read already: content that is
        gone (swept a moment ago) is :class:`AttachmentNotFound` here, before a response
        has started, not a download cut short."""
        parts = self.read(attachment)
        try:
            first = await anext(parts, b"")
        except FileNotFoundError:
            raise AttachmentNotFound(attachment.id) from None
        return _after(first, parts)

    async def content(self, attachment: Attachment) -> bytes:
        """The whole content, for a provider building a request that carries it."""
        return b"".join([part async for part in self.read(attachment)])

    async def sweep(self, *, older_than: timedelta, now: datetime | None = None) -> int:
        """Remove uploads no message refers to that are older than ``older_than``, and the
        content no remaining upload shares. Returns how many uploads were removed."""
        cutoff = (now or utcnow()) - older_than
        async with writer(self._engine).begin() as conn:
            removed = (
                (
                    await conn.execute(
                        delete(ATTACHMENTS)
                        .where(_a.referenced_at.is_(None), _a.created_at < cutoff)
                        .returning(_a.sha256)
                    )
                )
                .scalars()
                .all()
            )
        for sha256 in set(removed):
            await self.blobs.discard(sha256, partial(self._named, sha256))
        return len(removed)

    async def _named(self, sha256: str) -> bool:
        """Whether an upload names the content ``sha256``."""
        async with self._engine.connect() as conn:
            found = await conn.scalar(select(exists().where(_a.sha256 == sha256)))
        return bool(found)


async def _after(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for part in rest:
        yield part


def refer(conn: Connection, principal: Principal, ids: Sequence[str], now: datetime) -> None:
    """Mark ``principal``'s attachments ``ids`` referenced by a message, in the transaction
    that stores it; :class:`AttachmentNotFound` when any is not theirs (or was swept)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return
    marked = (
        conn.execute(
            update(ATTACHMENTS)
            .where(_a.id.in_(wanted), *_owned(principal))
            .values(referenced_at=func.coalesce(_a.referenced_at, now))
            .returning(_a.id)
        )
        .scalars()
        .all()
    )
    if len(marked) != len(wanted):
        missing = set(wanted) - set(marked)
        raise AttachmentNotFound(missing.pop())


def clean_name(name: str) -> str:
    """A name fit to show: the last part of whatever path a client sent, without control
    characters, at most :data:`NAME_LENGTH` characters (``file`` when nothing is left)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    shown = "".join(ch for ch in base if ch.isprintable()).strip()
    if len(shown) > NAME_LENGTH:
        stem, dot, suffix = shown.rpartition(".")
        keep = NAME_LENGTH - len(suffix) - 1 if dot and len(suffix) < 16 else NAME_LENGTH
        shown = shown[:keep] + (f".{suffix}" if dot and len(suffix) < 16 else "")
    return shown or "file"
