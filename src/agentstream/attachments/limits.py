"""How much a file and a message may carry.

Every limit is named as its environment variable is, and a refusal (413) names it, so a user
told "over the limit" learns which one and how large it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from agentstream.attachments.types import Attachment
from agentstream.errors import TooLarge

__all__ = ["AttachmentLimits", "file_too_large"]

MIB = 1024 * 1024


def file_too_large(limit: int, name: str = "max_attachment_bytes") -> TooLarge:
    """The refusal of a file over ``limit`` bytes (the limit named ``name``)."""
    return TooLarge(f"the file is over the limit of {limit} bytes ({name})", limit=name)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentLimits:
    """The limits on attachments (``AGENTSTREAM_*`` in brackets)."""

    max_file_bytes: int = 20 * MIB
    """Bytes per file (``MAX_ATTACHMENT_BYTES``)."""
    max_files_per_message: int = 10
    """Files one message may carry (``MAX_ATTACHMENTS_PER_MESSAGE``)."""
    max_message_bytes: int = 50 * MIB
    """Bytes of all the files of one message (``MAX_ATTACHMENT_BYTES_PER_MESSAGE``)."""
    unreferenced_after: timedelta = timedelta(hours=24)
    """How long an upload no message refers to is kept (``UNREFERENCED_ATTACHMENT_HOURS``)."""

    def check_message(self, attachments: Sequence[Attachment]) -> None:
        """Refuse (:class:`TooLarge`) a message carrying more than its limits allow."""
        if len(attachments) > self.max_files_per_message:
            raise TooLarge(
                f"a message carries at most {self.max_files_per_message} files "
                "(max_attachments_per_message)",
                limit="max_attachments_per_message",
            )
        total = sum(attachment.size for attachment in attachments)
        if total > self.max_message_bytes:
            raise TooLarge(
                f"the files of a message are at most {self.max_message_bytes} bytes together "
                "(max_attachment_bytes_per_message)",
                limit="max_attachment_bytes_per_message",
            )
