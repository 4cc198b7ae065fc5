"""A file's type comes from its content: what each kind looks like, what is refused, and the
images that decode to more pixels than anyone should pay for."""

from __future__ import annotations

import io

import pytest

from agentstream.attachments.sniffing import MAX_IMAGE_PIXELS, image_size, sniff
from agentstream.errors import TooLarge, UnsupportedMediaType

from . import samples


def sniffed(content: bytes, name: str = "upload", declared: str | None = None) -> str:
    return sniff(io.BytesIO(content), name, declared)


@pytest.mark.parametrize(
    ("content", "name", "media_type"),
    [
        (samples.png(), "shot.png", "image/png"),
        (samples.jpeg(), "photo.jpg", "image/jpeg"),
        (samples.gif(), "anim.gif", "image/gif"),
        (samples.webp(), "pic.webp", "image/webp"),
        (samples.PDF, "paper.pdf", "application/pdf"),
        (samples.CSV, "cities.csv", "text/csv"),
        (samples.MARKDOWN, "notes.md", "text/markdown"),
        (b'{"a": 1}', "data.json", "application/json"),
        (b"def main():\n    pass\n", "tool.py", "text/plain"),
        (b"plain words", "notes.txt", "text/plain"),
    ],
)
def test_each_kind_is_read_from_its_content(content: bytes, name: str, media_type: str) -> None:
    assert sniffed(content, name) == media_type


def test_a_binary_type_ignores_the_name_it_is_given() -> None:
    assert sniffed(samples.png(), "report.txt") == "image/png"
    assert sniffed(samples.PDF, "no-extension") == "application/pdf"


def test_html_claiming_to_be_a_png_is_refused() -> None:
    with pytest.raises(UnsupportedMediaType):
        sniffed(samples.HTML, "upload", declared="image/png")
    with pytest.raises(UnsupportedMediaType, match="not what image/png says"):
        sniffed(b"just text", "upload", declared="image/png")
    with pytest.raises(UnsupportedMediaType, match="not what its name 'cat.png' says"):
        sniffed(b"just text", "cat.png")


def test_a_png_claiming_to_be_a_pdf_is_refused() -> None:
    with pytest.raises(UnsupportedMediaType):
        sniffed(samples.png(), "paper.pdf")


@pytest.mark.parametrize(
    "markup", [samples.HTML, samples.SVG, b"\xef\xbb\xbf  <?xml version='1.0'?>"]
)
def test_markup_is_refused_whatever_its_name(markup: bytes) -> None:
    with pytest.raises(UnsupportedMediaType, match="HTML, SVG and XML"):
        sniffed(markup, "notes.txt")


def test_binary_content_is_refused() -> None:
    with pytest.raises(UnsupportedMediaType, match="neither"):
        sniffed(samples.BINARY, "blob.bin")
    with pytest.raises(UnsupportedMediaType):
        sniffed(b"caf\xc3", "cut.txt")  # ends in the middle of a character


@pytest.mark.parametrize(
    ("content", "media_type", "size"),
    [
        (samples.png(640, 480), "image/png", (640, 480)),
        (samples.jpeg(1024, 768, exif_bytes=60_000), "image/jpeg", (1024, 768)),
        (samples.gif(31, 17), "image/gif", (31, 17)),
        (samples.webp(300, 200), "image/webp", (300, 200)),
    ],
)
def test_image_sizes_are_read_from_headers(
    content: bytes, media_type: str, size: tuple[int, int]
) -> None:
    assert image_size(io.BytesIO(content), media_type) == size


def test_a_small_png_declaring_gigapixels_is_refused() -> None:
    bomb = samples.png(50_000, 50_000)
    assert len(bomb) < 1000
    with pytest.raises(TooLarge, match=f"{MAX_IMAGE_PIXELS} pixels") as refused:
        sniffed(bomb, "bomb.png")
    assert refused.value.limit == "image_pixels"


def test_a_damaged_image_is_refused() -> None:
    with pytest.raises(UnsupportedMediaType, match="damaged"):
        sniffed(b"\xff\xd8\xff\xe0", "broken.jpg")
