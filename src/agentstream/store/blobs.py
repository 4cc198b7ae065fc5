"""Attachment content in the database: the blob store a deployment on several hosts shares.

Each blob is cut into parts of :data:`PART_BYTES` rows of ``agentstream_blobs``, written in
one transaction (a blob is all there or not at all) and read one part per query, so neither
an upload nor a download holds a whole file in memory.

A blob's first part is its lock: keeping content and discarding it both lock that row
(``SELECT ... FOR UPDATE``; SQLite runs one writing transaction at a time anyway), so an
upload of some content and a sweep of the same content take turns (see
:meth:`~agentstream.attachments.blobs.BlobStore.discard`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agentstream.attachments.blobs import InUse, check_sha256
from agentstream.store.engine import writer
from agentstream.store.models import BLOBS

__all__ = ["PART_BYTES", "SqlBlobs"]

PART_BYTES = 1024 * 1024


class SqlBlobs:
    """Blobs in the store's database (see the module's docstring)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def keep(self, sha256: str, staged: Path) -> None:
        check_sha256(sha256)
        file = await asyncio.to_thread(staged.open, "rb")
        try:
            async with writer(self._engine).begin() as conn:
                if await _lock(conn, sha256):
                    return
                part, data = 0, await asyncio.to_thread(file.read, PART_BYTES)
                while part == 0 or data:  # part 0 even when empty: a blob is there or not
                    await conn.execute(
                        insert(BLOBS), {"sha256": sha256, "part": part, "data": data}
                    )
                    part, data = part + 1, await asyncio.to_thread(file.read, PART_BYTES)
        except IntegrityError:
            async with self._engine.connect() as conn:
                if not await _lock(conn, sha256):  # unless another upload of it won the race
                    raise
        finally:
            await asyncio.to_thread(file.close)

    async def read(self, sha256: str) -> AsyncIterator[bytes]:
        check_sha256(sha256)
        part = 0
        while True:
            async with self._engine.connect() as conn:
                data = await conn.scalar(
                    select(BLOBS.c.data).where(BLOBS.c.sha256 == sha256, BLOBS.c.part == part)
                )
            if data is None:
                if part == 0:
                    raise FileNotFoundError(sha256)
                return
            if data:
                yield bytes(data)
            part += 1

    async def discard(self, sha256: str, in_use: InUse) -> None:
        check_sha256(sha256)
        async with writer(self._engine).begin() as conn:
            if await _lock(conn, sha256) and not await in_use():
                await conn.execute(delete(BLOBS).where(BLOBS.c.sha256 == sha256))


async def _lock(conn: AsyncConnection, sha256: str) -> bool:
    """Whether the blob is there, its first part locked until ``conn``'s transaction ends
    (on PostgreSQL; a writing SQLite transaction has the whole database)."""
    found = await conn.scalar(
        select(BLOBS.c.part).where(BLOBS.c.sha256 == sha256, BLOBS.c.part == 0).with_for_update()
    )
    return found is not None
