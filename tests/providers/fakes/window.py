"""An upstream with a context window: it counts each request with a tokenizer of its own and
refuses one that does not fit with its vendor's real error, as the vendors do.

The count is :func:`count`, which runs *higher* than agentstream's estimate for the same
request (a token per two bytes of the request's JSON, where the estimate allows three
characters of text), so a client that trusted its estimate alone would be refused: what
passes here passes because the refusals were learned from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

from .server import Recorded, Reply

__all__ = ["Window", "count"]

BYTES_PER_TOKEN = 2
FILE_TOKENS = 1_000
"""What a file sent inline (base64) counts, as the vendors count an image, not by its size."""

_INLINE = re.compile(rb"[A-Za-z0-9+/=]{200,}")


def count(body: bytes) -> int:
    """The request's tokens by this upstream's tokenizer."""
    files = len(_INLINE.findall(body))
    return len(_INLINE.sub(b"", body)) // BYTES_PER_TOKEN + files * FILE_TOKENS


@dataclass
class Window:
    """Answers each request with ``answer`` (a reply builder) when it fits in ``window``
    tokens less ``reserve`` for the answer, else with ``vendor``'s context-length error.
    ``sizes`` records the count of every request, ``refused`` those it refused."""

    vendor: ModuleType
    window: int
    reserve: int
    answer: Callable[[Recorded], Reply] = field(default=lambda _: Reply())
    sizes: list[int] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)

    def __call__(self, recorded: Recorded) -> Reply:
        size = count(recorded.body)
        self.sizes.append(size)
        if size > self.window - self.reserve:
            self.refused.append(size)
            reply: Reply = self.vendor.context_overflow(self.window, size + self.reserve)
            return reply
        return self.answer(recorded)
