"""Files a protocol's message carries in its own form, made attachments of the caller.

The open protocols send files inside the message: the AI SDK as ``file`` parts whose ``url``
is a data URL (or a URL of an upload this server answered), AG-UI as image and document parts
whose ``source`` holds base64 data (or a URL). Each dialect reads its form into
:class:`SentFile`; :func:`attachment_ids` then keeps the inline ones through the server's
:class:`~agentstream.server.intake.Intake` (the same checks as ``POST /api/attachments``:
type from the content, size limits) and names the uploads by id.

The server never fetches a URL a client sent (that would let a message make the server
request any address it can reach): a URL is taken only when it is one of this server's
``/api/attachments/{id}``, which is looked up for the caller like any id.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes, urlsplit

from agentstream.principal import Principal
from agentstream.server.attachments import ATTACHMENTS_PATH
from agentstream.server.errors import bad_request
from agentstream.server.intake import Intake

__all__ = ["SentFile", "attachment_ids", "from_base64", "from_url"]

_OUR_URL = re.compile(re.escape(ATTACHMENTS_PATH) + r"/([^/]+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class SentFile:
    """A file as a message sent it: its bytes, or the id of an upload of the caller's."""

    field: str
    """Where it is in the request (for a 400 naming it)."""
    name: str
    declared: str | None = None
    data: bytes | None = None
    attachment_id: str | None = None


def from_url(url: str, *, field: str, name: str, declared: str | None = None) -> SentFile:
    """A file given by URL: a ``data:`` URL, or one of this server's attachment URLs
    (absolute or not); a 400 for any other."""
    if url.startswith("data:"):
        header, comma, payload = url[5:].partition(",")
        if not comma:
            raise bad_request(field, "a data URL needs a comma before its data")
        media_type, _, encoding = header.partition(";")
        data = _decoded(payload, field) if encoding == "base64" else unquote_to_bytes(payload)
        return SentFile(field=field, name=name, declared=declared or media_type, data=data)
    ours = _OUR_URL.fullmatch(urlsplit(url).path)
    if ours is None:
        raise bad_request(
            field,
            f"only data: URLs and this server's {ATTACHMENTS_PATH}/{{id}} URLs are taken "
            "(upload the file first)",
        )
    return SentFile(field=field, name=name, attachment_id=ours[1])


def from_base64(value: str, *, field: str, name: str, declared: str | None) -> SentFile:
    return SentFile(field=field, name=name, declared=declared, data=_decoded(value, field))


def _decoded(value: str, field: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise bad_request(field, "expected base64 data") from None


async def attachment_ids(
    intake: Intake | None, principal: Principal, files: Sequence[SentFile]
) -> tuple[str, ...]:
    """The ids of ``files`` as the caller's attachments: inline ones kept now, URLs of
    uploads named. A 400 naming the first file when the server keeps no attachments."""
    if not files:
        return ()
    if intake is None:
        raise bad_request(files[0].field, "this server keeps no attachments")
    ids: list[str] = []
    for sent in files:
        if sent.attachment_id is not None:
            ids.append(sent.attachment_id)
            continue
        assert sent.data is not None
        kept = await intake.keep_bytes(principal, sent.data, name=sent.name, declared=sent.declared)
        ids.append(kept.id)
    return tuple(ids)
