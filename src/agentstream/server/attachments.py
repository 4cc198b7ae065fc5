"""``/api/attachments``: upload a file for a message, and read it back.

::

    POST /api/attachments   multipart/form-data, the file in the field ``file``
        -> 201 {"id", "name", "media_type", "size", "sha256"}
    GET  /api/attachments/{id}   -> the content (its owner only)

An upload is written to storage as it arrives (:mod:`agentstream.server.uploads`), refused
with 413 naming the limit as soon as it passes ``AGENTSTREAM_MAX_ATTACHMENT_BYTES``, and with
415 when its content is not a kind the server takes or not what its name or declared type
claims (:mod:`agentstream.attachments.sniffing`). A message names uploads by id (each
protocol's ``attachments`` field, or its own file parts); one that is not the caller's is a
404, here and in a message alike.

Content is served with ``X-Content-Type-Options: nosniff`` and a sandboxing
``Content-Security-Policy``; raster images inline, anything else as a download, so no file
a user uploaded runs as a page of this origin.
"""

# No ``from __future__ import annotations``: FastAPI reads these annotations at runtime.

import asyncio
import logging
import re
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from agentstream.attachments.limits import AttachmentLimits, file_too_large
from agentstream.attachments.types import IMAGE_TYPES, TEXT_TYPES, Attachment
from agentstream.conversation import attachment_json
from agentstream.errors import Forbidden
from agentstream.origins import LOOPBACK_ORIGIN
from agentstream.principal import Principal
from agentstream.server.intake import Intake
from agentstream.server.settings import Settings
from agentstream.server.state import ServerContext
from agentstream.server.uploads import FILE_FIELD, receive_file
from agentstream.store.attachments import SqlAttachments

__all__ = [
    "ATTACHMENTS_PATH",
    "SWEEP_EVERY_SECONDS",
    "SWEEP_TASK",
    "attachment_url",
    "attachments_router",
    "sweep_forever",
]

log = logging.getLogger("agentstream.server")

ATTACHMENTS_PATH = "/api/attachments"
SWEEP_TASK = "agentstream: sweep uploads no message took"
"""The name of the app's task that sweeps (it lives as long as the app)."""
SWEEP_EVERY_SECONDS = 3600.0
"""How often uploads no message took are looked for (at most; sooner when they are kept
for less than twice this)."""
MULTIPART_OVERHEAD = 64 * 1024
"""What a form may add to its file: boundaries, part headers, small fields."""

_UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    FILE_FIELD: {
                        "type": "string",
                        "format": "binary",
                        "description": "The file: a PNG, JPEG, WebP or GIF image, a PDF, or "
                        "UTF-8 text (plain, Markdown, CSV, JSON, source code)",
                    }
                },
                "required": [FILE_FIELD],
            }
        }
    },
}
_ATTACHMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string", "description": "For display only"},
        "media_type": {"type": "string", "description": "Read from the content"},
        "size": {"type": "integer", "description": "Bytes"},
        "sha256": {"type": "string", "description": "The content's SHA-256, in hex"},
    },
    "required": ["id", "name", "media_type", "size", "sha256"],
}
_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def attachment_url(attachment_id: str) -> str:
    """Where the owner reads an attachment (relative to the server), as messages show it."""
    return f"{ATTACHMENTS_PATH}/{quote(attachment_id, safe='')}"


def attachments_router(intake: Intake, server: ServerContext) -> APIRouter:
    """The attachment endpoints: uploads through ``intake``, kept in its store (see the
    module's docstring)."""
    router = APIRouter(prefix=ATTACHMENTS_PATH, tags=["attachments"])
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]
    attachments, limits = intake.attachments, intake.limits

    @router.post(
        "",
        status_code=201,
        openapi_extra={"requestBody": _UPLOAD_BODY},
        responses={
            201: {
                "description": "The file, kept",
                "content": {"application/json": {"schema": _ATTACHMENT_SCHEMA}},
            },
            413: {"description": "Over a limit, named in `limit`", "content": _ERROR},
            415: {"description": "Not a kind of file the server takes", "content": _ERROR},
        },
    )
    async def upload(principal: CurrentPrincipal, request: Request) -> JSONResponse:
        """Keep a file for a message; the answer's ``id`` is what a message names."""
        check_sender(request, server.settings)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limits.max_file_bytes + MULTIPART_OVERHEAD:
            raise file_too_large(limits.max_file_bytes)
        saved = await intake.keep(principal, lambda stage: receive_file(request, stage))
        return JSONResponse(attachment_json(saved), status_code=201)

    @router.get(
        "/{attachment_id}",
        response_class=StreamingResponse,
        responses={
            200: {"description": "The content", "content": {"*/*": {}}},
            404: {"description": "No such attachment of the caller's", "content": _ERROR},
        },
    )
    async def download(principal: CurrentPrincipal, attachment_id: str) -> StreamingResponse:
        """The content of one of the caller's attachments."""
        attachment = await attachments.get(principal, attachment_id)
        return StreamingResponse(
            await attachments.opened(attachment),
            media_type=_served_type(attachment),
            headers=served_headers(attachment),
        )

    return router


def check_sender(request: Request, settings: Settings) -> None:
    """Refuse an upload that a page of another site made in the visitor's name.

    A multipart form is one of the posts a browser sends to any site without asking it
    first (no CORS preflight), with that site's cookies, and in anonymous local mode the
    caller needs no credentials at all: so a page anywhere could fill a user's uploads. The
    JSON endpoints are safe by their content type; here the ``Origin`` a browser sends decides:
    this server's own, an origin the deployment allows (``AGENTSTREAM_CORS_ORIGINS``, or a
    loopback page in anonymous local mode), or a request with a bearer token, which no form
    can carry."""
    origin = request.headers.get("origin")
    if origin is None or urlsplit(origin).netloc == request.headers.get("host"):
        return
    if not settings.anonymous and request.headers.get("authorization"):
        return
    if origin in settings.cors_origins:
        return
    if settings.anonymous and re.fullmatch(LOOPBACK_ORIGIN, origin):
        return
    raise Forbidden("an upload from a page of another site needs a bearer token")


def _served_type(attachment: Attachment) -> str:
    if attachment.media_type in TEXT_TYPES:
        return f"{attachment.media_type}; charset=utf-8"
    return attachment.media_type


def served_headers(attachment: Attachment) -> dict[str, str]:
    """Headers that keep an uploaded file from acting as a page of this origin."""
    disposition = "inline" if attachment.media_type in IMAGE_TYPES else "attachment"
    fallback = attachment.name.encode("ascii", "replace").decode().replace('"', "'")
    return {
        "Content-Length": str(attachment.size),
        "Content-Disposition": (
            f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{quote(attachment.name)}"
        ),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, max-age=86400",
    }


async def sweep_forever(attachments: SqlAttachments, limits: AttachmentLimits) -> None:
    """Remove uploads no message took, now and then, until cancelled."""
    every = min(SWEEP_EVERY_SECONDS, limits.unreferenced_after.total_seconds() / 2)
    while True:
        await asyncio.sleep(max(every, 1.0))
        try:
            removed = await attachments.sweep(older_than=limits.unreferenced_after)
            if removed:
                log.info("removed %d uploads no message took", removed)
        except Exception:
            log.exception("could not remove uploads no message took")
