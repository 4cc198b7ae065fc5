"""How many tokens a request is, estimated before it is sent, without calling anybody.

The budget a model call is checked against (:mod:`agentstream.agent.budget`) needs a count
before the call, on every call of a run. The vendors' exact counts are network calls
(Anthropic's and Gemini's ``count_tokens``) or tokenizer files fetched at first use
(``tiktoken`` downloads its BPE tables), and a local model's tokenizer is unknown; so the
count is an estimate that errs high for every vendor's tokenizer rather than a precise one
for some:

* text: a token per :data:`ASCII_CHARS_PER_TOKEN` characters of ASCII text (English prose
  runs at about 4 with the vendors' tokenizers, code and JSON at 3 to 3.5), and a token per
  :data:`UTF8_BYTES_PER_TOKEN` bytes of UTF-8 for any other text (Chinese or Japanese, at
  three bytes a character, counts 1.2 tokens a character: the vendors use about one);
* each message, tool call and tool result adds a few tokens of framing
  (:data:`FRAMING_TOKENS`), as the vendors' chat formats do;
* images count what the vendors charge for a large one (:data:`IMAGE_TOKENS`: Anthropic
  scales an image down to about 1,600 tokens, OpenAI's mini models count up to about 2,500
  for theirs, its high detail on other models less; Gemini's 258 tokens a tile come to
  less up to about 2,000 pixels a side), PDF documents a token per
  :data:`PDF_BYTES_PER_TOKEN` bytes and no less than an image (a page is read as text and as
  an image), text files as their text.

Should the estimate still fall short, the vendor's refusal is caught and the request is sent
again smaller (see :mod:`agentstream.agent.loop`). An estimate is made once per message
object for a run (:class:`TokenCounter` keeps them), so a long history costs its full count
once, then only its new messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentstream.attachments.types import Attachment
from agentstream.messages import AssistantMessage, Message, UserMessage
from agentstream.providers.base import ToolSpec

__all__ = [
    "ASCII_CHARS_PER_TOKEN",
    "FRAMING_TOKENS",
    "IMAGE_TOKENS",
    "PDF_BYTES_PER_TOKEN",
    "UTF8_BYTES_PER_TOKEN",
    "TokenCounter",
    "attachment_tokens",
    "message_tokens",
    "text_tokens",
    "tool_tokens",
]

ASCII_CHARS_PER_TOKEN = 3
UTF8_BYTES_PER_TOKEN = 2.5
FRAMING_TOKENS = 8
IMAGE_TOKENS = 2_500
PDF_BYTES_PER_TOKEN = 30


def text_tokens(text: str) -> int:
    """A conservative count of ``text``'s tokens (see the module's docstring)."""
    if not text:
        return 0
    if text.isascii():
        return -(-len(text) // ASCII_CHARS_PER_TOKEN)
    return int(len(text.encode("utf-8", "surrogatepass")) / UTF8_BYTES_PER_TOKEN) + 1


def attachment_tokens(attachment: Attachment) -> int:
    """What a file is likely to cost the model that reads it, from its kind and size."""
    kind = attachment.kind
    if kind == "image":
        return IMAGE_TOKENS
    if kind == "pdf":
        return max(IMAGE_TOKENS, attachment.size // PDF_BYTES_PER_TOKEN)
    return -(-attachment.size // ASCII_CHARS_PER_TOKEN) + FRAMING_TOKENS


def tool_tokens(tools: Sequence[ToolSpec]) -> int:
    """The tool definitions of a request: names, descriptions and JSON Schemas."""
    return sum(
        text_tokens(t.name)
        + text_tokens(t.description)
        + text_tokens(json.dumps(t.parameters, separators=(",", ":")))
        + FRAMING_TOKENS
        for t in tools
    )


def message_tokens(message: Message) -> int:
    """One message's estimate, its attachments included."""
    if isinstance(message, UserMessage):
        return (
            FRAMING_TOKENS
            + text_tokens(message.content)
            + sum(map(attachment_tokens, message.attachments))
        )
    if isinstance(message, AssistantMessage):
        total = FRAMING_TOKENS + text_tokens(message.text)
        for block in message.reasoning:
            total += text_tokens(block.text) + text_tokens(block.signature or "")
            total += text_tokens(block.redacted or "")
        for call in message.tool_calls:
            arguments = json.dumps(call.arguments, separators=(",", ":"), default=str)
            total += FRAMING_TOKENS + text_tokens(call.name) + text_tokens(arguments)
        return total
    return FRAMING_TOKENS + sum(
        FRAMING_TOKENS
        + text_tokens(result.content)
        + sum(map(attachment_tokens, result.attachments))
        for result in message.results
    )


class TokenCounter:
    """Estimates messages once each: a run asks before every model call, with a history that
    only grows, so a message already counted is a dictionary lookup. Messages are kept by
    identity (they are frozen, and hashing one by value would cost as much as counting it);
    the counter holds each message it counted, so an identity cannot be reused while it is
    in the table."""

    __slots__ = ("_counted",)

    def __init__(self) -> None:
        self._counted: dict[int, tuple[Message, int]] = {}

    def __call__(self, message: Message) -> int:
        found = self._counted.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        tokens = message_tokens(message)
        self._counted[id(message)] = (message, tokens)
        return tokens

    def total(self, messages: Sequence[Message]) -> int:
        return sum(map(self, messages))
