"""A multipart upload read as it arrives: the one file part written straight to its staging
file (:mod:`agentstream.attachments.staging`), never the whole body in memory.

Starlette's form parsing would keep the body's file in a spooled temporary file and hand it
over once the request is whole, so a file over the limit would be read to its end before
being refused. Reading the stream ourselves refuses it at the first byte over, and writes
each part once. Other fields of the form are skipped unread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import ClientDisconnect, Request

from agentstream.attachments.staging import Staging
from agentstream.errors import RefusedRequest

__all__ = ["FILE_FIELD", "Received", "receive_file"]

FILE_FIELD = "file"
_MAX_HEADER_BYTES = 8 * 1024


@dataclass(slots=True, kw_only=True)
class Received:
    """What the client said of the file: its name and declared type (both only claims)."""

    name: str
    declared_type: str | None


@dataclass(slots=True)
class _Parts:
    """The parser's callbacks' state: which part is the file, and its bytes not yet written."""

    headers: dict[str, bytes] = field(default_factory=dict)
    """A part's headers as sent: browsers write a file's name in raw UTF-8."""
    header_field: bytearray = field(default_factory=bytearray)
    header_value: bytearray = field(default_factory=bytearray)
    header_bytes: int = 0
    in_file: bool = False
    received: Received | None = None
    pending: list[bytes] = field(default_factory=list)

    def begin(self) -> None:
        self.headers.clear()
        self.in_file = False

    def field_data(self, data: bytes, start: int, end: int) -> None:
        self._count(end - start)
        self.header_field += data[start:end]

    def value_data(self, data: bytes, start: int, end: int) -> None:
        self._count(end - start)
        self.header_value += data[start:end]

    def _count(self, size: int) -> None:
        self.header_bytes += size
        if self.header_bytes > _MAX_HEADER_BYTES:
            raise RefusedRequest(FILE_FIELD, "the form's part headers are too long")

    def header_end(self) -> None:
        name = self.header_field.decode("latin-1").strip().lower()
        self.headers[name] = bytes(self.header_value)
        self.header_field.clear()
        self.header_value.clear()

    def headers_finished(self) -> None:
        _, options = parse_options_header(self.headers.get("content-disposition"))
        if options.get(b"name") != FILE_FIELD.encode() or self.received is not None:
            return
        if b"filename" not in options:
            raise RefusedRequest(FILE_FIELD, "the field 'file' must be a file, not a value")
        self.in_file = True
        declared = self.headers.get("content-type")
        self.received = Received(
            name=options[b"filename"].decode("utf-8", "replace"),
            declared_type=None if declared is None else declared.decode("latin-1"),
        )

    def data(self, data: bytes, start: int, end: int) -> None:
        if self.in_file:
            self.pending.append(data[start:end])

    def end(self) -> None:
        self.in_file = False


async def receive_file(request: Request, staging: Staging) -> Received:
    """Write the request's ``file`` part into ``staging`` as the body arrives; what the
    client said of it. :class:`RefusedRequest` for a body that is not a form with a file
    in ``file``; :class:`~agentstream.errors.TooLarge` from ``staging`` as soon as the file
    passes its limit."""
    kind, options = parse_options_header(request.headers.get("content-type"))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise RefusedRequest(
            FILE_FIELD, "expected multipart/form-data with the file in the field 'file'"
        )
    parts = _Parts()
    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": parts.begin,
            "on_header_field": parts.field_data,
            "on_header_value": parts.value_data,
            "on_header_end": parts.header_end,
            "on_headers_finished": parts.headers_finished,
            "on_part_data": parts.data,
            "on_part_end": parts.end,
        },
    )
    try:
        async for chunk in request.stream():
            try:
                parser.write(chunk)
            except MultipartParseError:
                raise RefusedRequest(FILE_FIELD, "the form is malformed") from None
            for data in parts.pending:
                await staging.write(data)
            parts.pending.clear()
    except ClientDisconnect:
        # Nobody is left to answer; a refusal rather than a server error in the logs.
        raise RefusedRequest(FILE_FIELD, "the upload was cut short") from None
    parser.finalize()
    if parts.received is None:
        raise RefusedRequest(FILE_FIELD, "field required")
    return parts.received
