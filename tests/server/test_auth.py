"""Authentication over a real server: JWT HS256/RS256/JWKS, cookies, anonymous local mode."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI

from agentstream.server.app import create_app
from agentstream.server.settings import Settings, SettingsError
from tests.server.agents import ichor_agent, tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import SECRET, LiveServer, bearer, datas, parse_sse, stream_text, token

ICHOR = "/v1/agent/chat"
TRAY = "/api/chat/stream"
BODY = {"message": "What does it do?", "context_type": "workflow"}


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def unsigned(claims: dict[str, Any]) -> str:
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims)}."


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({}, "Missing credentials"),
        (bearer(token(secret="another-secret-that-is-long-enough-x")), "not valid"),
        (bearer(jwt.encode({"sub": "a", "exp": int(time.time()) - 60}, SECRET)), "expired"),
        (bearer(unsigned({"sub": "a", "exp": int(time.time()) + 3600})), "not valid"),
        (bearer("garbage"), "not valid"),
        ({"Authorization": "Basic YTpi"}, "Malformed"),
        (bearer(jwt.encode({"exp": int(time.time()) + 3600}, SECRET)), "'sub'"),
        (bearer(jwt.encode({"sub": "a"}, SECRET)), "'exp'"),
    ],
    ids=["missing", "bad-signature", "expired", "alg-none", "garbage", "basic", "no-sub", "no-exp"],
)
def test_bad_credentials_are_401(serve: Serve, headers: dict[str, str], reason: str) -> None:
    server = serve(ichor_agent(), auth=True)
    with server.client() as client:
        response = client.post(ICHOR, json=BODY, headers=headers)
    assert response.status_code == 401
    assert reason in response.json()["detail"]
    assert response.headers["www-authenticate"] == "Bearer"
    # No token material in the answer.
    assert "eyJ" not in response.text


def test_valid_bearer_streams_and_cookie_only_for_session_dialects(serve: Serve) -> None:
    server = serve(tray_agent(), auth=True)
    good = token("erin")
    cookie = {"Cookie": f"agentstream_session={good}"}
    with server.client() as client:
        ichor_with_cookie = client.post(ICHOR, json=BODY, headers=cookie)
        ok, text = stream_text(client, TRAY, json={"message": "hi"}, headers=cookie)
        by_bearer, _ = stream_text(client, ICHOR, json=BODY, headers=bearer(good))
    assert ichor_with_cookie.status_code == 401  # the workflow assistant is bearer-only
    assert ok.status_code == 200
    assert datas(parse_sse(text))[-1]["type"] == "complete"
    assert by_bearer.status_code == 200


def test_rs256_public_key_and_hs_confusion(serve: Serve) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    server = serve(ichor_agent(), jwt_public_key=public_pem)
    good = jwt.encode({"sub": "frank", "exp": int(time.time()) + 60}, key, algorithm="RS256")
    with server.client() as client:
        ok, _ = stream_text(client, ICHOR, json=BODY, headers=bearer(good))
        hs = client.post(ICHOR, json=BODY, headers=bearer(token("frank")))
    assert ok.status_code == 200
    assert hs.status_code == 401


def test_jwks_url(serve: Serve) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": "k1", "use": "sig", "alg": "RS256"})
    keys = FastAPI()

    @keys.get("/.well-known/jwks.json")
    async def jwks() -> dict[str, Any]:
        return {"keys": [jwk]}

    issuer = LiveServer(keys).start()
    try:
        server = serve(ichor_agent(), jwks_url=f"{issuer.url}/.well-known/jwks.json")
        claims = {"sub": "gina", "exp": int(time.time()) + 60}
        good = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
        unknown = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k2"})
        with server.client() as client:
            ok, _ = stream_text(client, ICHOR, json=BODY, headers=bearer(good))
            bad = client.post(ICHOR, json=BODY, headers=bearer(unknown))
        assert ok.status_code == 200
        assert bad.status_code == 401
    finally:
        issuer.stop()


def test_wrong_tenant_is_403(serve: Serve) -> None:
    server = serve(ichor_agent(), auth=True, tenant_claim="tenant")
    body = {"brandRef": "acme", "model": "scripted:script", "content": "hi", "stream": False}
    with server.client() as client:
        wrong = client.post(
            "/api/chat/agent-chat/stream?brandRef=acme",
            json=body,
            headers=bearer(token("hank", tenant="globex")),
        )
        right = client.post(
            "/api/chat/agent-chat/stream?brandRef=acme",
            json=body,
            headers=bearer(token("hank", tenant="acme")),
        )
    assert wrong.status_code == 403
    assert right.status_code == 200


def test_anonymous_mode_only_on_loopback() -> None:
    with pytest.raises(SettingsError, match="no authentication"):
        create_app(ichor_agent(), settings=Settings(host="0.0.0.0"))
    create_app(ichor_agent(), settings=Settings(host="0.0.0.0", jwt_secret=SECRET))
    create_app(ichor_agent(), settings=Settings(host="::1"))


def test_a_short_hs256_secret_is_refused_at_start() -> None:
    with pytest.raises(SettingsError, match="at least 32 bytes"):
        create_app(ichor_agent(), settings=Settings(jwt_secret="hunter2"))
    create_app(ichor_agent(), settings=Settings(jwt_secret="x" * 32))


def test_settings_from_env() -> None:
    settings = Settings.from_env(
        {
            "AGENTSTREAM_HOST": "0.0.0.0",
            "AGENTSTREAM_PORT": "9001",
            "AGENTSTREAM_JWT_SECRET": "s",
            "AGENTSTREAM_CORS_ORIGINS": "https://a.example, https://b.example",
            "AGENTSTREAM_MAX_BODY_BYTES": "2048",
            "AGENTSTREAM_HEARTBEAT_SECONDS": "0.5",
            "AGENTSTREAM_DIAGNOSTICS": "true",
        }
    )
    assert (settings.host, settings.port, settings.max_body_bytes) == ("0.0.0.0", 9001, 2048)
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert settings.heartbeat_seconds == 0.5 and settings.diagnostics
    assert "jwt_secret" not in repr(settings)
    with pytest.raises(SettingsError):
        Settings.from_env({"AGENTSTREAM_PORT": "eighty"})


async def test_anonymous_mode_refuses_a_non_loopback_connection() -> None:
    from starlette.requests import Request

    from agentstream.principal import ANONYMOUS
    from agentstream.server.auth import AnonymousAuthenticator, AuthError

    def request(host: str) -> Request:
        return Request({"type": "http", "headers": [], "server": (host, 8000)})

    auth = AnonymousAuthenticator()
    assert await auth.authenticate(request("127.0.0.1"), allow_cookie=True) is ANONYMOUS
    with pytest.raises(AuthError):
        await auth.authenticate(request("10.0.0.5"), allow_cookie=True)


def test_audience_and_issuer_are_required_when_configured(serve: Serve) -> None:
    server = serve(ichor_agent(), auth=True, jwt_audience="agentstream", jwt_issuer="https://idp")
    right = {"aud": "agentstream", "iss": "https://idp"}
    with server.client() as client:
        ok, _ = stream_text(client, ICHOR, json=BODY, headers=bearer(token("ivy", **right)))
        answers = {
            name: client.post(ICHOR, json=BODY, headers=bearer(token("ivy", **claims)))
            for name, claims in {
                "no-aud": {"iss": "https://idp"},
                "other-aud": {**right, "aud": "another-app"},
                "no-iss": {"aud": "agentstream"},
                "other-iss": {**right, "iss": "https://evil"},
            }.items()
        }
    assert ok.status_code == 200
    assert {name: r.status_code for name, r in answers.items()} == dict.fromkeys(answers, 401)
    assert "'aud'" in answers["no-aud"].json()["detail"]
    assert "'iss'" in answers["no-iss"].json()["detail"]


def test_anonymous_mode_refuses_a_request_for_another_host_name(serve: Serve) -> None:
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 reaches the
    local server from the user's browser, but its requests still name evil.example."""
    server = serve(tray_agent())
    with server.client() as client:
        rebound = client.get("/api/chat/models", headers={"Host": f"evil.example:{server.port}"})
        streamed = client.post(TRAY, json={"message": "hi"}, headers={"Host": "evil.example"})
        by_name = client.get("/api/chat/models", headers={"Host": f"localhost:{server.port}"})
        by_v6 = client.get("/api/chat/models", headers={"Host": f"[::1]:{server.port}"})
        by_address = client.get("/api/chat/models")
    assert rebound.status_code == 401 and "localhost" in rebound.json()["detail"]
    assert streamed.status_code == 401
    assert [by_name.status_code, by_v6.status_code, by_address.status_code] == [200, 200, 200]


def test_jwks_token_naming_a_key_that_is_not_rsa_is_401(serve: Serve) -> None:
    """IdPs often publish EC or symmetric keys beside the RSA ones. A token that names one is
    refused like any bad token (PyJWT itself would raise TypeError: a 500)."""
    from cryptography.hazmat.primitives.asymmetric import ec

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    ec_jwk = json.loads(
        jwt.algorithms.ECAlgorithm.to_jwk(ec.generate_private_key(ec.SECP256R1()).public_key())
    )
    oct_jwk = {"kty": "oct", "k": _b64({"not": "a key"})}
    keys = FastAPI()

    @keys.get("/jwks.json")
    async def jwks() -> dict[str, Any]:
        return {
            "keys": [
                {**rsa_jwk, "kid": "rsa", "use": "sig", "alg": "RS256"},
                {**ec_jwk, "kid": "ec", "use": "sig"},
                {**oct_jwk, "kid": "oct"},
            ]
        }

    issuer = LiveServer(keys).start()
    try:
        server = serve(ichor_agent(), jwks_url=f"{issuer.url}/jwks.json")
        claims = {"sub": "gina", "exp": int(time.time()) + 60}
        with server.client() as client:
            answers = [
                client.post(
                    ICHOR,
                    json=BODY,
                    headers=bearer(
                        jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})
                    ),
                )
                for kid in ("ec", "oct")
            ]
            ok, _ = stream_text(
                client,
                ICHOR,
                json=BODY,
                headers=bearer(jwt.encode(claims, key, algorithm="RS256", headers={"kid": "rsa"})),
            )
        assert [a.status_code for a in answers] == [401, 401]
        assert all("not an RS256 key" in a.json()["detail"] for a in answers)
        assert ok.status_code == 200
    finally:
        issuer.stop()


@pytest.mark.parametrize(
    "header",
    [
        ("X-Forwarded-For", "203.0.113.9"),
        ("Forwarded", "for=203.0.113.9;proto=https"),
        ("X-Real-IP", "203.0.113.9"),
        ("X-Forwarded-Host", "chat.example.com"),
        ("Via", "1.1 nginx"),
    ],
)
def test_anonymous_mode_refuses_a_request_forwarded_by_a_proxy(
    serve: Serve, header: tuple[str, str]
) -> None:
    """A reverse proxy on the same machine connects from loopback and may name 127.0.0.1 as
    the host: the forwarding headers it adds are what give the public caller away."""
    server = serve(tray_agent())
    with server.client() as client:
        forwarded = client.post(TRAY, json={"message": "hi"}, headers=dict([header]))
        direct = client.get("/api/chat/models")
    assert forwarded.status_code == 401
    assert "proxy" in forwarded.json()["detail"]
    assert direct.status_code == 200
