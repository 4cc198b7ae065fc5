"""Attachments for the store tests: the two blob stores, and uploads made from bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentstream.attachments.blobs import BlobStore, FileBlobs
from agentstream.attachments.staging import staging
from agentstream.attachments.types import Attachment
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore
from agentstream.store.attachments import SqlAttachments
from agentstream.store.blobs import SqlBlobs
from tests.attachments.s3 import new_bucket, object_blobs

BLOB_STORES = ("files", "database", "s3")


def blob_store(
    kind: str, store: SqlConversationStore, root: Path, request: pytest.FixtureRequest
) -> BlobStore:
    if kind == "files":
        return FileBlobs(root)
    if kind == "database":
        return SqlBlobs(store.engine)
    url: str = request.getfixturevalue("s3_url")
    return object_blobs(url, new_bucket(url))


async def upload(
    attachments: SqlAttachments,
    principal: Principal,
    content: bytes,
    *,
    name: str = "notes.txt",
    media_type: str = "text/plain",
    staging_dir: Path,
) -> Attachment:
    """``content`` uploaded by ``principal`` as the server does it: staged, then saved."""
    async with staging(staging_dir, limit=len(content) + 1, limit_name="test") as stage:
        for start in range(0, len(content), 1000):
            await stage.write(content[start : start + 1000])
        return await attachments.save(
            principal, name=name, media_type=media_type, staged=stage.staged()
        )
