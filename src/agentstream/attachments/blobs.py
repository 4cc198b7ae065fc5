"""Where attachment content lives: one small interface, addressed by the content's SHA-256.

A blob store keeps bytes under their hash and knows nothing of names, owners or messages
(those are the metadata's, :mod:`agentstream.store.attachments`). Content-addressing makes
the same file uploaded twice, by anyone, one blob; it also means a blob is never rewritten,
so readers need no locks.

Two stores ship: :class:`FileBlobs`, files under the data directory (the default: one host),
and :class:`~agentstream.store.blobs.SqlBlobs`, parts in the database (a PostgreSQL deployment
on several hosts shares attachments with nothing new to run).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import BinaryIO, Protocol, runtime_checkable

__all__ = ["READ_BYTES", "BlobStore", "FileBlobs", "InUse", "check_sha256"]

READ_BYTES = 256 * 1024
"""How much of a blob is read at a time."""
_SHA256 = re.compile(r"[0-9a-f]{64}")

InUse = Callable[[], Awaitable[bool]]
"""Whether some upload still names a content (asked by :meth:`BlobStore.discard`)."""


def check_sha256(sha256: str) -> str:
    """``sha256`` if it is 64 lowercase hex digits (the only thing ever made into a path)."""
    if not _SHA256.fullmatch(sha256):
        raise ValueError("not a SHA-256 in hex")
    return sha256


@runtime_checkable
class BlobStore(Protocol):
    """Content by its SHA-256."""

    async def keep(self, sha256: str, staged: Path) -> None:
        """Keep the content of the file ``staged`` (whose SHA-256 the caller computed)
        under ``sha256``; a blob already there is kept as it is. ``staged`` may be moved
        away or left for the caller to remove."""
        ...

    def read(self, sha256: str) -> AsyncIterator[bytes]:
        """The content, a part at a time (``FileNotFoundError`` when there is none)."""
        ...

    async def discard(self, sha256: str, in_use: InUse) -> None:
        """Remove the content unless ``in_use()`` says an upload names it. The question is
        asked once the content is out of an upload's way: an upload of the same content
        that committed its row before is seen, and one that commits after finds no blob
        and keeps its own. (Asking first and removing after would lose the content of an
        upload that came in between, because :meth:`keep` keeps a blob already there.)"""
        ...


class FileBlobs:
    """Blobs as files under ``root``, at ``<root>/<first two digits>/<sha256>``: a file is
    put in place by a rename, so a reader sees all of it or nothing."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        sha256 = check_sha256(sha256)
        return self.root / sha256[:2] / sha256

    async def keep(self, sha256: str, staged: Path) -> None:
        target = self.path(sha256)
        await asyncio.to_thread(_move_into_place, staged, target)

    async def read(self, sha256: str) -> AsyncIterator[bytes]:
        # One trip to a thread for a file that fits a part (most images): each trip costs
        # about as much as reading 100 KB, and a message's files are read before its call.
        file, part = await asyncio.to_thread(_open_and_read, self.path(sha256))
        try:
            while part:
                yield part
                if len(part) < READ_BYTES:
                    return
                part = await asyncio.to_thread(file.read, READ_BYTES)
        finally:
            file.close()  # closing a regular file does not wait on the disk

    async def discard(self, sha256: str, in_use: InUse) -> None:
        # Out of the way by a rename (an upload now writes its own copy), then back by a
        # link, which fails rather than replace a copy an upload wrote meanwhile.
        target = self.path(sha256)
        aside = target.with_name(f"{target.name}.{os.urandom(8).hex()}.discarded")
        try:
            await asyncio.to_thread(os.rename, target, aside)
        except FileNotFoundError:
            return
        try:
            if await in_use():
                await asyncio.to_thread(_link_back, aside, target)
        finally:
            await asyncio.to_thread(aside.unlink, missing_ok=True)


def _open_and_read(path: Path) -> tuple[BinaryIO, bytes]:
    file = path.open("rb")
    try:
        return file, file.read(READ_BYTES)
    except BaseException:
        file.close()
        raise


def _link_back(aside: Path, target: Path) -> None:
    with contextlib.suppress(FileExistsError):  # an upload kept the content again meanwhile
        os.link(aside, target)


def _move_into_place(staged: Path, target: Path) -> None:
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staged, target)
