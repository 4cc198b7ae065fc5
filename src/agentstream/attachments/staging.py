"""An upload on its way in: written to a file part by part as it arrives, hashed and counted
as it goes, and refused the moment it passes the size limit, so a file of any size costs a
part's worth of memory and the limit's worth of disk at most.

The staged file is then sniffed (:mod:`agentstream.attachments.sniffing`) and handed to a
blob store (:mod:`agentstream.attachments.blobs`) under its hash.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agentstream.attachments.limits import file_too_large

__all__ = ["Staged", "Staging", "staging"]


@dataclass(slots=True)
class Staged:
    """What was received: the file it is in, its size and SHA-256."""

    path: Path
    size: int
    sha256: str


@dataclass(slots=True)
class Staging:
    """An upload being written (see :func:`staging`)."""

    file: BinaryIO
    path: Path
    limit: int
    limit_name: str
    size: int = 0
    _hash: hashlib._Hash = field(default_factory=hashlib.sha256)

    async def write(self, data: bytes) -> None:
        """Add ``data``; :class:`TooLarge` once the upload is over the limit."""
        self.size += len(data)
        if self.size > self.limit:
            raise file_too_large(self.limit, self.limit_name)
        self._hash.update(data)
        await asyncio.to_thread(self.file.write, data)

    def staged(self) -> Staged:
        self.file.flush()
        return Staged(path=self.path, size=self.size, sha256=self._hash.hexdigest())


@asynccontextmanager
async def staging(
    directory: Path, *, limit: int, limit_name: str = "max_attachment_bytes"
) -> AsyncIterator[Staging]:
    """A file in ``directory`` to write an upload into; removed on the way out (whatever
    a blob store did not move away)."""
    await asyncio.to_thread(directory.mkdir, parents=True, exist_ok=True)
    fd, name = await asyncio.to_thread(tempfile.mkstemp, dir=directory, prefix="upload-")
    file = os.fdopen(fd, "w+b")
    try:
        yield Staging(file=file, path=Path(name), limit=limit, limit_name=limit_name)
    finally:
        await asyncio.to_thread(file.close)
        await asyncio.to_thread(Path(name).unlink, missing_ok=True)
