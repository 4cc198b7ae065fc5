"""Each vendor's refusal of a request longer than the model's window, as the vendor sends it,
is a :class:`ContextOverflow` (not retried) carrying the window and the refused size when the
vendor states them; an ordinary refusal stays a ``bad_request``."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from agentstream.errors import ContextOverflow
from agentstream.providers._errors import from_status, overflow

from .conftest import FAST_RETRY
from .fakes import openai
from .fakes.server import FakeUpstream
from .helpers import collect_until_error, request

STATES_NO_SIZE = {"openai-responses"}


async def test_each_vendor_says_the_conversation_is_too_long(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.context_overflow(8_192, 9_000), vendor.text("never"))

    provider = make(retry=FAST_RETRY)
    _, error = await collect_until_error(provider.stream(request()))

    assert isinstance(error, ContextOverflow)
    assert error.kind == "context_overflow" and not error.retryable
    assert error.message.startswith(
        f"{provider.vendor}: the conversation is longer than the model's context window ("
    )
    if vendor.name in STATES_NO_SIZE:
        assert (error.window, error.requested) == (None, None)
    else:
        assert (error.window, error.requested) == (8_192, 9_000)
    assert len(upstream.posts) == 1


@pytest.mark.parametrize("reply", [openai.compatible_overflow, openai.llama_cpp_overflow])
async def test_openai_compatible_servers_too(upstream: FakeUpstream, make: Any, reply: Any) -> None:
    upstream.queue(reply(4_096, 5_000))
    provider = openai.provider(upstream, retry=FAST_RETRY)

    _, error = await collect_until_error(provider.stream(request()))

    assert isinstance(error, ContextOverflow)
    assert (error.window, error.requested) == (4_096, 5_000)


@pytest.mark.parametrize(
    ("error_type", "detail", "window", "requested"),
    [
        # Anthropic, when the prompt fits but the answer's limit does not
        (
            "invalid_request_error",
            "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, "
            "decrease input length or `max_tokens` and try again",
            200_000,
            197_000,
        ),
        # A Responses stream's response.failed names the code only
        ("context_length_exceeded", None, None, None),
        # Older llama.cpp servers give the sizes as fields
        (
            "exceed_context_size_error",
            {
                "message": "the request exceeds the available context size, try increasing the "
                "context size or enable context shift",
                "n_prompt_tokens": 5000,
                "n_ctx": 4096,
            },
            4096,
            None,
        ),
    ],
)
def test_other_shapes(
    error_type: str, detail: object, window: int | None, requested: int | None
) -> None:
    found = overflow(error_type, detail)
    assert found is not None and (found.window, found.requested) == (window, requested)
    error = from_status("Vendor", 400, error_type=error_type, detail=detail)
    assert isinstance(error, ContextOverflow)


def test_other_refusals_are_not_overflows() -> None:
    assert overflow("invalid_request_error", "messages: field required") is None
    assert overflow(None, "max_tokens: 100000 > 64000, the maximum for this model") is None
    assert from_status("Vendor", 401, detail="prompt is too long: 9 tokens > 8 maximum").kind == (
        "auth"
    )
