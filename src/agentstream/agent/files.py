"""The content of the files a conversation carries, for each model request of a run.

A message holds attachments by reference; the provider needs their bytes. Before each turn
the loop asks :class:`RunFiles` for the content of every attachment in the history it sends
(user messages and tool results alike): each is read once per run, and a kind of file the
model cannot read (per its profile, :mod:`agentstream.providers.profiles`) fails the run
before the vendor is called, naming the model and the kind.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from agentstream.attachments.owned import AttachmentContent
from agentstream.attachments.types import Attachment
from agentstream.errors import ProviderError
from agentstream.messages import Message, ToolResultsMessage, UserMessage
from agentstream.providers.profiles import ModelProfile, cannot_read

__all__ = ["RunFiles", "attachments_in"]


def attachments_in(messages: Sequence[Message]) -> Iterator[Attachment]:
    """Every attachment of ``messages``, in order."""
    for message in messages:
        if isinstance(message, UserMessage):
            yield from message.attachments
        elif isinstance(message, ToolResultsMessage):
            for result in message.results:
                yield from result.attachments


class RunFiles:
    """The attachments' content for one run's model requests (see the module's docstring)."""

    def __init__(self, reader: AttachmentContent | None, model: str, profile: ModelProfile):
        self._reader = reader
        self._model = model
        self._profile = profile
        self._loaded: dict[str, bytes] = {}

    async def for_request(self, messages: Sequence[Message]) -> Mapping[str, bytes]:
        """The content of every attachment in ``messages``, by SHA-256. Raises
        :class:`ProviderError` (``bad_request``) for one the model cannot read, or whose
        content cannot be had."""
        attachments = list(attachments_in(messages))
        kind = self._profile.unreadable(a.kind for a in attachments)
        if kind is not None:
            raise ProviderError("bad_request", cannot_read(self._model, kind))
        for attachment in attachments:
            if attachment.sha256 in self._loaded:
                continue
            if self._reader is None:
                raise ProviderError(
                    "bad_request", "this agent keeps no attachments: a file cannot be sent"
                )
            try:
                self._loaded[attachment.sha256] = await self._reader.content(attachment)
            except FileNotFoundError:
                raise ProviderError(
                    "bad_request", f"the attachment {attachment.name!r} is no longer kept"
                ) from None
        return self._loaded
