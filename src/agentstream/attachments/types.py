"""What a message holds of a file: a reference, never the bytes.

A conversation keeps its attachments by reference (:class:`Attachment`: id, name, media
type, size and the SHA-256 of the content), stored inside the message that carries them, so
history, reloads and replays see the same files. The bytes live in a blob store
(:mod:`agentstream.attachments.blobs`), addressed by their hash, and each provider reads them
only when it builds its vendor's request. This module imports nothing of ours: the message
types (:mod:`agentstream.messages`) refer to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "IMAGE_TYPES",
    "KINDS",
    "PDF_TYPE",
    "TEXT_TYPES",
    "Attachment",
    "AttachmentKind",
    "kind_of",
]

AttachmentKind = Literal["image", "pdf", "text"]
"""What a model must be able to take for an attachment to reach it: raster images, PDF
documents, or text (which every model takes, written into the message with its name)."""

KINDS: tuple[AttachmentKind, ...] = ("image", "pdf", "text")

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
"""The raster images every vendor with image input takes; the only types served inline."""
PDF_TYPE = "application/pdf"
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/csv", "application/json"})
"""Text files: plain text and source code (``text/plain``), Markdown, CSV and JSON."""


def kind_of(media_type: str) -> AttachmentKind:
    """The kind of a media type this server accepts (``ValueError`` for any other)."""
    if media_type in IMAGE_TYPES:
        return "image"
    if media_type == PDF_TYPE:
        return "pdf"
    if media_type in TEXT_TYPES:
        return "text"
    raise ValueError(f"not an attachment type: {media_type}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Attachment:
    """A file a user uploaded (or a tool produced), as a message refers to it.

    ``name`` is for display only: it is never a path. ``media_type`` was sniffed from the
    content when it arrived, never taken from the name or the type the client declared."""

    id: str
    name: str
    media_type: str
    size: int
    """Bytes."""
    sha256: str
    """The content's SHA-256 (hex): where the blob store keeps it."""

    @property
    def kind(self) -> AttachmentKind:
        return kind_of(self.media_type)
