"""What a file is, read from its content: the only type an attachment is ever given.

A name or a declared type is what the sender says; the bytes are what a browser or a model
would act on. So the media type comes from magic bytes (PNG, JPEG, GIF, WebP, PDF) or, for
text, from the content being UTF-8 without NUL characters; the name only chooses among the
text types (``.csv`` is CSV, ``.md`` Markdown). A file whose name or declared type claims
another kind than its content shows (an HTML page called ``cat.png``) is refused, and so is
markup (HTML, SVG, XML), which a browser would run.

Images are checked for the size they decode to, read from their headers: a few kilobytes of
PNG can declare gigapixels, and whoever decodes it (a thumbnailer, a vendor) pays for them.

The functions read a seekable file and block: callers run them in a thread.
"""

from __future__ import annotations

import codecs
import struct
from pathlib import PurePosixPath
from typing import BinaryIO

from agentstream.attachments.types import IMAGE_TYPES, PDF_TYPE, AttachmentKind, kind_of
from agentstream.errors import TooLarge, UnsupportedMediaType

__all__ = ["MAX_IMAGE_PIXELS", "image_size", "sniff"]

MAX_IMAGE_PIXELS = 8000 * 8000
"""The largest image taken, in pixels: the largest any vendor reads (Anthropic's 8000 px
square); anything larger is a decompression bomb or would be refused by the model anyway."""

_HEAD = 64
_READ = 64 * 1024
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", PDF_TYPE),
)
_MARKUP = (b"<!doctype", b"<html", b"<head", b"<body", b"<script", b"<svg", b"<?xml", b"<iframe")
_TEXT_BY_SUFFIX = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".json": "application/json",
}
_CLAIMED_BY_SUFFIX: dict[str, AttachmentKind] = {
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".gif": "image",
    ".webp": "image",
    ".pdf": "pdf",
}


def sniff(file: BinaryIO, name: str, declared: str | None = None) -> str:
    """The media type of ``file``'s content (read from its start; ``name`` and ``declared``
    only pick a text type and are checked against the content). Raises
    :class:`UnsupportedMediaType` for content this server does not take or that is not
    what it claims, :class:`TooLarge` for an image of more than :data:`MAX_IMAGE_PIXELS`."""
    file.seek(0)
    head = file.read(_HEAD)
    media_type = _binary_type(head) or _text_type(file, name)
    _check_claims(media_type, name, declared)
    if media_type in IMAGE_TYPES:
        width, height = image_size(file, media_type)
        if width * height > MAX_IMAGE_PIXELS:
            raise TooLarge(
                f"the image is {width}x{height} pixels, over the limit of {MAX_IMAGE_PIXELS} "
                "pixels (image_pixels)",
                limit="image_pixels",
            )
    return media_type


def _binary_type(head: bytes) -> str | None:
    for magic, media_type in _MAGIC:
        if head.startswith(magic):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _text_type(file: BinaryIO, name: str) -> str:
    """The text type of a file that is UTF-8 throughout, without NUL and not markup."""
    file.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    start = b""
    while chunk := file.read(_READ):
        if len(start) < 512:
            start += chunk[: 512 - len(start)]
        if b"\x00" in chunk:
            raise UnsupportedMediaType("the file is neither text nor a supported image or PDF")
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError:
            raise UnsupportedMediaType(
                "the file is neither UTF-8 text nor a supported image or PDF"
            ) from None
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise UnsupportedMediaType("the file is not UTF-8 text: it ends mid-character") from None
    opening = start.removeprefix(codecs.BOM_UTF8).lstrip().lower()
    if opening.startswith(_MARKUP):
        raise UnsupportedMediaType("HTML, SVG and XML files are not accepted")
    return _TEXT_BY_SUFFIX.get(PurePosixPath(name).suffix.lower(), "text/plain")


def _check_claims(media_type: str, name: str, declared: str | None) -> None:
    """Refuse content whose name or declared type claims another kind."""
    found = kind_of(media_type)
    claimed = _CLAIMED_BY_SUFFIX.get(PurePosixPath(name).suffix.lower())
    declared_type = (declared or "").partition(";")[0].strip().lower()
    said = declared_type if declared_type.startswith("image/") or declared_type == PDF_TYPE else ""
    for claim, what in ((claimed, f"its name {name!r}"), (_declared_kind(said), said)):
        if claim is not None and claim != found:
            raise UnsupportedMediaType(
                f"the content is {media_type}, not what {what} says it is; "
                "a file's type is read from its content"
            )


def _declared_kind(declared: str) -> AttachmentKind | None:
    if declared.startswith("image/"):
        return "image"
    return "pdf" if declared == PDF_TYPE else None


def image_size(file: BinaryIO, media_type: str) -> tuple[int, int]:
    """Width and height from an image's headers, without decoding it."""
    file.seek(0)
    head = file.read(32)
    size: tuple[int, int] | None
    if media_type == "image/png":
        size = struct.unpack(">II", head[16:24]) if head[12:16] == b"IHDR" else None
    elif media_type == "image/gif":
        size = struct.unpack("<HH", head[6:10]) if len(head) >= 10 else None
    elif media_type == "image/webp":
        size = _webp_size(head)
    else:
        size = _jpeg_size(file)
    if size is None:
        raise UnsupportedMediaType(f"the {media_type} image is damaged: its size cannot be read")
    return size


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and head[20:21] == b"\x2f":
        (bits,) = struct.unpack("<I", head[21:25])
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8X":
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    return None


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""JPEG's start-of-frame markers (the others in the range are tables)."""


def _jpeg_size(file: BinaryIO) -> tuple[int, int] | None:
    """The frame size of a JPEG: its segments are walked (skipping metadata of any length)
    up to the first start-of-frame."""
    file.seek(2)
    while True:
        marker = file.read(2)
        if len(marker) < 2 or marker[0] != 0xFF:
            return None
        while marker[1] == 0xFF:  # fill bytes
            marker = marker[1:] + file.read(1)
        (length,) = struct.unpack(">H", file.read(2) or b"\x00\x00")
        if length < 2:
            return None
        if marker[1] in _SOF:
            frame = file.read(5)
            if len(frame) < 5:
                return None
            height, width = struct.unpack(">HH", frame[1:5])
            return width, height
        file.seek(length - 2, 1)
