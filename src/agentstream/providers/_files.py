"""Attachments as every provider needs them: the content beside each reference, in the
encodings vendors take (base64, data URLs), and text files written into the message.

A provider converts :class:`~agentstream.attachments.Attachment` references to its vendor's
native blocks at its edge; the bytes come with the request
(:attr:`~agentstream.providers.base.ChatRequest.files`, by SHA-256), loaded by the agent loop
from the attachment store. What every vendor does alike (find the content, encode it, frame a
text file with its name) is here, once; each vendor writes only its block shapes.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from agentstream.attachments.types import Attachment
from agentstream.errors import ProviderError

__all__ = ["Attached", "attached"]


@dataclass(frozen=True, slots=True)
class Attached:
    """An attachment with its content."""

    attachment: Attachment
    data: bytes

    @property
    def kind(self) -> str:
        return self.attachment.kind

    @property
    def media_type(self) -> str:
        return self.attachment.media_type

    @property
    def name(self) -> str:
        return self.attachment.name

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64}"

    @property
    def text(self) -> str:
        """A text file as the model reads it: its content, framed with its name and type
        (every vendor takes text; none has a native form for a CSV)."""
        name = escape(self.name, quote=True)
        content = self.data.decode("utf-8")
        return f'<file name="{name}" media_type="{self.media_type}">\n{content}\n</file>'


def attached(attachments: Sequence[Attachment], files: Mapping[str, bytes]) -> list[Attached]:
    """``attachments`` with their content from ``files`` (by SHA-256). A missing content is
    a bad request: the caller forgot to load it, and the model must not answer without it."""
    found: list[Attached] = []
    for attachment in attachments:
        data = files.get(attachment.sha256)
        if data is None:
            raise ProviderError(
                "bad_request", f"the content of the attachment {attachment.name!r} is missing"
            )
        found.append(Attached(attachment, data))
    return found
