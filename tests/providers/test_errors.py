"""The shared error vocabulary: classification and user-safe messages."""

from __future__ import annotations

import pytest

from agentstream.providers._errors import from_status, safe_message, scrub


@pytest.mark.parametrize(
    ("status", "error_type", "kind", "retryable"),
    [
        (401, "invalid_request_error", "auth", False),  # OpenAI's 401 says invalid_request
        (403, None, "auth", False),
        (429, None, "rate_limited", True),
        (400, "RESOURCE_EXHAUSTED", "rate_limited", True),
        (529, "overloaded_error", "overloaded", True),
        (503, "UNAVAILABLE", "overloaded", True),
        (500, "api_error", "provider", True),
        (400, "invalid_request_error", "bad_request", False),
        (404, "not_found_error", "bad_request", False),
        (504, None, "timeout", False),
        (None, "overloaded_error", "overloaded", True),  # inside a 200 stream
        (None, "rate_limit_error", "rate_limited", True),
        (None, None, "provider", True),
    ],
)
def test_classification(
    status: int | None, error_type: str | None, kind: str, retryable: bool
) -> None:
    error = from_status("Vendor", status, error_type=error_type, detail="details")
    assert (error.kind, error.retryable, error.status_code) == (kind, retryable, status)
    assert error.message.startswith("Vendor: ")
    assert error.message.endswith("(details)")


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided: sk-proj-abcdefghijklmnop",
        "key AIzaSyA1234567890abcdefghij is invalid",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
        '{"api_key": "my-own-secret-123"}',
        "x-api-key=hunter2hunter2",
    ],
)
def test_credentials_are_scrubbed(text: str) -> None:
    cleaned = scrub(text)
    for secret in (
        "sk-proj-abcdefghijklmnop",
        "AIzaSyA1234567890abcdefghij",
        "eyJhbGci",
        "my-own-secret-123",
        "hunter2hunter2",
    ):
        assert secret not in cleaned
    assert "[redacted]" in cleaned


def test_known_secret_values_are_scrubbed_and_details_truncated() -> None:
    message = safe_message(
        "Vendor", "auth", "token is plain-value-42 " + "x" * 1000, secrets=["plain-value-42"]
    )
    assert "plain-value-42" not in message
    assert len(message) < 400
    assert message.endswith("…)")
