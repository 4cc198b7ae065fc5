"""Attachments in the store, on SQLite and PostgreSQL, with content on disk and in the
database: only their owner reads or refers to them, a message keeps them through reloads and
later runs, and uploads no message took are swept away with content nobody else shares."""

from __future__ import annotations

import asyncio
import hashlib
import os
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from agentstream.attachments.blobs import FileBlobs
from agentstream.attachments.types import Attachment
from agentstream.errors import AttachmentNotFound
from agentstream.messages import UserMessage
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore
from agentstream.store.attachments import SqlAttachments, clean_name
from agentstream.store.models import ATTACHMENTS, utcnow

from .attachments import BLOB_STORES, blob_store, upload
from .helpers import exchange, new_principal, run_id

CONTENT = b"line one\nline two\n"


@pytest.fixture(params=BLOB_STORES)
def attachments(
    request: pytest.FixtureRequest, store: SqlConversationStore, tmp_path: Path
) -> SqlAttachments:
    return SqlAttachments(
        store.engine, blob_store(request.param, store, tmp_path / "blobs", request)
    )


async def test_an_upload_reads_back_whole(
    attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    content = CONTENT * 100_000  # several parts of the database's blobs
    saved = await upload(attachments, alice, content, name="log.txt", staging_dir=tmp_path)
    assert (saved.name, saved.size) == ("log.txt", len(content))
    assert saved.sha256 == hashlib.sha256(content).hexdigest()
    assert await attachments.get(alice, saved.id) == saved
    assert await attachments.content(saved) == content
    assert not any(p.name.startswith("upload-") for p in os.scandir(tmp_path))  # removed


async def test_the_same_content_is_kept_once(
    store: SqlConversationStore, alice: Principal, tmp_path: Path
) -> None:
    blobs = FileBlobs(tmp_path / "blobs")
    attachments = SqlAttachments(store.engine, blobs)
    first = await upload(attachments, alice, CONTENT, staging_dir=tmp_path)
    second = await upload(attachments, new_principal(), CONTENT, staging_dir=tmp_path)
    assert first.id != second.id and first.sha256 == second.sha256
    assert [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()] == [blobs.path(first.sha256)]


async def test_another_users_or_tenants_attachment_is_not_found(
    attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    saved = await upload(attachments, alice, CONTENT, staging_dir=tmp_path)
    same_user_other_tenant = Principal(user_id=alice.user_id, tenant_id="elsewhere")
    for stranger in (new_principal(alice.tenant_id), same_user_other_tenant):
        with pytest.raises(AttachmentNotFound):
            await attachments.get(stranger, saved.id)
        with pytest.raises(AttachmentNotFound):  # what the owner's upload left in memory too
            await attachments.resolve(stranger, [saved.id])
    assert await attachments.resolve(alice, [saved.id]) == (saved,)
    with pytest.raises(AttachmentNotFound):
        await attachments.resolve(alice, [saved.id, "no-such-id"])


async def test_a_message_keeps_its_attachments_through_reloads_and_later_runs(
    store: SqlConversationStore, attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    saved = await upload(attachments, alice, CONTENT, staging_dir=tmp_path)
    started = await store.start_run(
        alice,
        run_id=run_id(),
        conversation_id=None,
        user_message="What does this say?",
        attachments=[saved],
    )
    cid = started.conversation_id
    detail = await store.get_conversation(alice, cid)
    (shown,) = [m for m in detail.messages if m.role == "user"]
    assert shown.attachments == (saved,)
    assert shown.to_json()["attachments"] == [
        {
            "id": saved.id,
            "name": "notes.txt",
            "media_type": "text/plain",
            "size": len(CONTENT),
            "sha256": saved.sha256,
        }
    ]
    later = await store.start_run(
        alice, run_id=run_id(), conversation_id=cid, user_message="And now?"
    )
    assert later.history[0] == UserMessage(content="What does this say?", attachments=(saved,))


async def test_a_message_naming_someone_elses_attachment_is_refused_and_stores_nothing(
    store: SqlConversationStore, attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    theirs = await upload(attachments, new_principal(), CONTENT, staging_dir=tmp_path)
    with pytest.raises(AttachmentNotFound):
        await store.start_run(
            alice, run_id=run_id(), conversation_id=None, user_message="hi", attachments=[theirs]
        )
    assert (await store.list_conversations(alice)).items == ()
    cid = await exchange(store, alice, "first", "answer")
    with pytest.raises(AttachmentNotFound):
        await store.start_run(
            alice, run_id=run_id(), conversation_id=cid, user_message="hi", attachments=[theirs]
        )
    detail = await store.get_conversation(alice, cid)
    assert [m.content for m in detail.messages] == ["first", "answer"]


async def test_the_sweep_removes_only_old_uploads_no_message_took(
    store: SqlConversationStore, attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    kept = await upload(attachments, alice, b"referenced", staging_dir=tmp_path)
    await store.start_run(
        alice, run_id=run_id(), conversation_id=None, user_message="see", attachments=[kept]
    )
    forgotten = await upload(attachments, alice, b"forgotten", staging_dir=tmp_path)
    shared = await upload(attachments, alice, b"referenced", staging_dir=tmp_path)
    day = timedelta(days=1)
    assert await attachments.sweep(older_than=day) == 0  # too recent
    removed = await attachments.sweep(older_than=day, now=utcnow() + 2 * day)
    assert removed >= 2  # on PostgreSQL, other tests' uploads may go too
    for gone in (forgotten, shared):
        with pytest.raises(AttachmentNotFound):
            await attachments.get(alice, gone.id)
    with pytest.raises(FileNotFoundError):
        await attachments.content(forgotten)
    # The referenced upload shares its content with the swept one: the content stays.
    assert await attachments.content(await attachments.get(alice, kept.id)) == b"referenced"


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\ann\\report.pdf", "report.pdf"),
        ("line\nbreak\x00.txt", "linebreak.txt"),
        ("", "file"),
        ("a" * 300 + ".png", "a" * 251 + ".png"),
    ],
)
def test_names_are_kept_for_display_only(sent: str, shown: str) -> None:
    assert clean_name(sent) == shown


@pytest.mark.parametrize("odd", ["\x00", "a/../b", "x" * 65, ""])
async def test_ids_that_cannot_be_ours_are_not_found(
    attachments: SqlAttachments, alice: Principal, odd: str
) -> None:
    with pytest.raises(AttachmentNotFound):
        await attachments.resolve(alice, [odd])


async def test_an_empty_file_is_kept_too(
    attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    saved = await upload(attachments, alice, b"", name="empty.txt", staging_dir=tmp_path)
    assert saved.size == 0
    assert await attachments.content(saved) == b""
    assert [part async for part in await attachments.opened(saved)] == []


async def test_content_that_is_gone_is_not_found_before_anything_is_read(
    attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    saved = await upload(attachments, alice, CONTENT, staging_dir=tmp_path)
    await attachments.blobs.discard(saved.sha256, nobody_names_it)
    with pytest.raises(AttachmentNotFound):
        await attachments.opened(saved)


async def nobody_names_it() -> bool:
    return False


async def test_an_upload_of_content_being_swept_keeps_its_content(
    store: SqlConversationStore, attachments: SqlAttachments, alice: Principal, tmp_path: Path
) -> None:
    """The sweep removes the last upload naming some content, then its blob. The same content
    uploaded again just after the sweep learnt that no upload names it must not lose its
    blob: the upload either writes a blob of its own or waits for the sweep to finish."""
    old = await upload(attachments, alice, CONTENT, staging_dir=tmp_path)
    async with store.engine.begin() as conn:  # the old upload, now swept
        await conn.execute(ATTACHMENTS.delete().where(ATTACHMENTS.c.id == old.id))
    again: asyncio.Task[Attachment] | None = None

    async def an_upload_comes_in() -> bool:
        nonlocal again
        async with store.engine.connect() as conn:
            named = await conn.scalar(
                select(func.count())
                .select_from(ATTACHMENTS)
                .where(ATTACHMENTS.c.sha256 == old.sha256)
            )
        again = asyncio.create_task(upload(attachments, alice, CONTENT, staging_dir=tmp_path))
        await asyncio.wait([again], timeout=0.5)  # done, or waiting for the sweep
        return bool(named)

    await attachments.blobs.discard(old.sha256, an_upload_comes_in)
    assert again is not None
    kept = await again
    assert await attachments.content(await attachments.get(alice, kept.id)) == CONTENT


async def test_an_upload_whose_content_cannot_be_kept_leaves_no_row(
    store: SqlConversationStore, alice: Principal, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_bytes(b"")
    attachments = SqlAttachments(store.engine, FileBlobs(blocked))
    with pytest.raises(NotADirectoryError):
        await upload(attachments, alice, CONTENT, staging_dir=tmp_path)
    async with store.engine.connect() as conn:
        rows = await conn.scalar(
            select(func.count())
            .select_from(ATTACHMENTS)
            .where(ATTACHMENTS.c.owner_id == alice.user_id)
        )
    assert rows == 0
