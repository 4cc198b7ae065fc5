"""Attachment content in the database: the blob store a deployment on several hosts shares.

Each blob is cut into parts of :data:`PART_BYTES` rows of ``agentstream_blobs``, written in
one transaction (a blob is all there or not at all) and read one part per query, so neither
an upload nor a download holds a whole file in memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import delete, exists, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agentstream.attachments.blobs import check_sha256
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
        if await self._has(sha256):
            return
        file = await asyncio.to_thread(staged.open, "rb")
        try:
            async with writer(self._engine).begin() as conn:
                part, data = 0, await asyncio.to_thread(file.read, PART_BYTES)
                while part == 0 or data:  # part 0 even when empty: a blob is there or not
                    await conn.execute(
                        insert(BLOBS), {"sha256": sha256, "part": part, "data": data}
                    )
                    part, data = part + 1, await asyncio.to_thread(file.read, PART_BYTES)
        except IntegrityError:
            if not await self._has(sha256):  # another upload of the same content won the race
                raise
        finally:
            await asyncio.to_thread(file.close)

    async def _has(self, sha256: str) -> bool:
        async with self._engine.connect() as conn:
            found = await conn.scalar(select(exists().where(BLOBS.c.sha256 == sha256)))
        return bool(found)

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

    async def delete(self, sha256: str) -> None:
        check_sha256(sha256)
        async with writer(self._engine).begin() as conn:
            await conn.execute(delete(BLOBS).where(BLOBS.c.sha256 == sha256))
