from __future__ import annotations

import pytest

from agentstream.chat.redaction import REDACTED, Scrubber, is_secret_key, redact, secret_values


@pytest.mark.parametrize(
    "key",
    [
        "authorization",
        "Authorization",
        "token",
        "access_token",
        "accessToken",
        "api_key",
        "apiKey",
        "X-Api-Key",
        "password",
        "client_secret",
        "Cookie",
        "set-cookie",
        "credentials",
    ],
)
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "max_tokens",
        "input_tokens",
        "author",
        "workflow_id",
        "name",
        # a workflow node's settings: the model must be able to explain them
        "signature",
        "token_limit",
        "auth_required",
        "session_id",
        "tokenizer",
    ],
)
def test_keys_that_are_not_secrets(key: str) -> None:
    assert not is_secret_key(key)


def test_the_deployment_chooses_its_secret_keys() -> None:
    context = {"pin": "1234", "password": "hunter2", "signature": "HMAC-SHA256"}
    assert redact(context, frozenset({"pin"})) == {
        "pin": REDACTED,
        "password": "hunter2",
        "signature": "HMAC-SHA256",
    }


def test_redact_replaces_secret_values_at_any_depth() -> None:
    context = {
        "workflow_id": "w1",
        "auth": {"token": "abc"},
        "items": [{"api_key": "k1", "name": "n"}],
        "password": None,
    }
    assert redact(context) == {
        "workflow_id": "w1",
        "auth": {"token": REDACTED},
        "items": [{"api_key": REDACTED, "name": "n"}],
        "password": None,
    }


def test_secret_values_are_collected_for_scrubbing() -> None:
    assert secret_values({"a": {"api_key": "k-123"}, "b": [{"password": "pw-456"}]}) == [
        "k-123",
        "pw-456",
    ]


def test_scrubber_replaces_known_secrets_inside_strings_and_secret_shapes() -> None:
    scrub = Scrubber(["sekrit-value", None, "ab"])
    text = scrub.text("x sekrit-value y Bearer abcdefghijkl z sk-abcdefghijklmnop ab")
    assert text == f"x {REDACTED} y {REDACTED} z {REDACTED} ab"
    assert scrub({"note": ["sekrit-value"], "token": "other"}) == {
        "note": [REDACTED],
        "token": REDACTED,
    }


def test_scrubber_replaces_a_google_api_key() -> None:
    key = "AIza" + "Sy" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
    assert Scrubber().text(f"call with key={key} now") == f"call with key={REDACTED} now"
