"""Real files of every kind the server takes (and some it refuses), built byte by byte so a
test shows exactly what it sends."""

from __future__ import annotations

import hashlib
import struct
import zlib

from agentstream.attachments import Attachment


def encode_png(width: int, height: int, rows: bytes, *, colour: int = 2, level: int = -1) -> bytes:
    """``rows`` (each a filter byte, then the pixels: RGB for ``colour`` 2, grey for 0) as a
    PNG file that declares ``width`` x ``height``, compressed at zlib's ``level``."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, level))
        + chunk(b"IEND", b"")
    )


def png(width: int = 2, height: int = 2) -> bytes:
    """A PNG of ``width`` x ``height`` grey pixels: valid for small sizes; for large ones the
    header declares the size over a few bytes of data, as a decompression bomb does."""
    rows = b"".join(b"\x00" + b"\x80" * min(width, 64) for _ in range(min(height, 64)))
    return encode_png(width, height, rows, colour=0)


def jpeg(width: int = 3, height: int = 2, exif_bytes: int = 100) -> bytes:
    """The segments of a baseline JPEG up to its frame header, after metadata of
    ``exif_bytes``."""
    app1 = b"\xff\xe1" + struct.pack(">H", exif_bytes + 2) + b"E" * exif_bytes
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app1 + sof0 + b"\xff\xd9"


def gif(width: int = 4, height: int = 4) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b"\x3b"


def webp(width: int = 5, height: int = 7) -> bytes:
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    vp8x += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
CSV = b"city,population\nLyon,522250\nNantes,320732\n"
MARKDOWN = "# Findings\n\nThe café is *open*.\n".encode()
BINARY = bytes(range(256)) * 4


def reference(content: bytes, name: str, media_type: str) -> Attachment:
    """How a message refers to ``content`` once uploaded."""
    digest = hashlib.sha256(content).hexdigest()
    return Attachment(
        id=f"att-{digest[:8]}", name=name, media_type=media_type, size=len(content), sha256=digest
    )


PNG = png(4, 4)
IMAGE = reference(PNG, "error.png", "image/png")
PAPER = reference(PDF, "paper.pdf", "application/pdf")
TABLE = reference(CSV, "cities.csv", "text/csv")
CONTENT = {IMAGE.sha256: PNG, PAPER.sha256: PDF, TABLE.sha256: CSV}
"""The content of the references above, by SHA-256 (as a model request carries it)."""
