"""Attachment content in an S3-compatible object store: the blob store for deployments whose
hosts share a bucket rather than a disk or a database (AWS S3, MinIO, Cloudflare R2, Ceph...).

Named by ``AGENTSTREAM_ATTACHMENT_STORAGE=s3://bucket/prefix``; the endpoint, region and
credentials come from the standard ``AWS_*`` variables (``AWS_ENDPOINT_URL``,
``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ALLOW_HTTP`` for an
endpoint without TLS), read by the client itself so that no secret passes through our
settings. The client is ``obstore`` (the ``s3`` extra): async, and it streams an upload from
its staging file in parts and a download a part at a time, so neither is held whole.

Objects are ``<prefix>/<first two digits>/<sha256>``, written only if absent (a conditional
put): content-addressing makes an object's bytes never change, so readers need no locks.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

try:
    import obstore
    from obstore.exceptions import AlreadyExistsError
    from obstore.store import S3Store
except ImportError:  # imported only when a deployment names a bucket
    raise ImportError(
        "attachments in S3 need the s3 extra: pip install 'agentstream[s3]'"
    ) from None

from agentstream.attachments.blobs import READ_BYTES, InUse, check_sha256

__all__ = ["ObjectBlobs"]


class ObjectBlobs:
    """Blobs as objects of an S3-compatible bucket (see the module's docstring)."""

    def __init__(self, store: S3Store) -> None:
        self._store = store

    @classmethod
    def from_url(cls, url: str) -> ObjectBlobs:
        """The bucket and prefix ``url`` (``s3://bucket/prefix``) names, configured from the
        environment."""
        return cls(S3Store.from_url(url))

    @staticmethod
    def key(sha256: str) -> str:
        sha256 = check_sha256(sha256)
        return f"{sha256[:2]}/{sha256}"

    async def keep(self, sha256: str, staged: Path) -> None:
        with contextlib.suppress(AlreadyExistsError):  # the same content, kept before
            await obstore.put_async(self._store, self.key(sha256), staged, mode="create")

    async def read(self, sha256: str) -> AsyncIterator[bytes]:
        found = await obstore.get_async(self._store, self.key(sha256))  # FileNotFoundError
        async for part in found.stream(min_chunk_size=READ_BYTES):
            yield bytes(part)

    async def discard(self, sha256: str, in_use: InUse) -> None:
        # An object store renames by copying: aside, then the original removed (an upload now
        # writes its own), then back if a row still names the content. The bytes under a key
        # never change, so putting them back over an upload's copy changes nothing.
        key = self.key(sha256)
        aside = f"{key}.{os.urandom(8).hex()}.discarded"
        try:
            await obstore.copy_async(self._store, key, aside)
        except FileNotFoundError:
            return
        try:
            await obstore.delete_async(self._store, key)
            if await in_use():
                await obstore.copy_async(self._store, aside, key)
        finally:
            await obstore.delete_async(self._store, aside)
