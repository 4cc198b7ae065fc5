"""Who is calling: pluggable authentication that produces a :class:`Principal`.

An :class:`Authenticator` turns a request into a principal or raises :class:`AuthError`
(HTTP 401). Built in:

* :class:`JwtAuthenticator`: a JWT from ``Authorization: Bearer`` or, for the session-cookie
  dialects (data playground, ops agent, and the web UI's chat tray), from the session cookie.
  HS256 with a shared secret, or RS256 with a public key or a JWKS URL. The algorithm list is
  fixed by the key type, so ``alg: none`` and HS/RS confusion are rejected by construction.
  Tokens must carry ``exp``; ``aud`` and ``iss`` are required and checked when configured.
* :class:`AnonymousAuthenticator`: anonymous local mode, everyone is ``local``. Only when no
  authentication is configured, and only for connections to a loopback address.

The raw token stays on the principal (``Principal.token``, hidden from ``repr``) because the
workflow assistant protocol forwards it verbatim to the tools' downstream APIs. It never
appears in an error message.

Tenants: when ``tenant_claim`` is configured, a request that names a tenant (the data
playground's ``brandRef``) must find it among that claim's values, or it is
:class:`Forbidden` (403).

Administrators (:func:`is_admin`) read every user's usage and ``/metrics`` from anywhere: the
callers whose token carries the role ``AGENTSTREAM_ADMIN_ROLE`` in the claim
``AGENTSTREAM_JWT_ROLES_CLAIM``, and in anonymous local mode the local user (who is the only
user there). An application's own authenticator says who is one by the claims it puts on its
principals, read the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

import anyio
import jwt
from starlette.requests import HTTPConnection

from agentstream.errors import AuthError, Forbidden
from agentstream.principal import ANONYMOUS, Principal
from agentstream.server.settings import Settings, is_loopback

__all__ = [
    "AnonymousAuthenticator",
    "AuthError",
    "Authenticator",
    "Forbidden",
    "JwtAuthenticator",
    "authenticator_from_settings",
    "for_tenant",
    "forwarded",
    "is_admin",
    "roles",
]


class Authenticator(Protocol):
    async def authenticate(self, request: HTTPConnection, *, allow_cookie: bool) -> Principal:
        """The caller of ``request``; raises :class:`AuthError`. ``allow_cookie`` says whether
        the endpoint accepts the session cookie as well as a bearer token."""
        ...


class AnonymousAuthenticator:
    """Everyone is ``local``, for connections to a loopback address that name a loopback host.

    The ``Host`` check stops DNS rebinding: a web page from ``evil.example`` whose name is
    made to resolve to 127.0.0.1 reaches this server from the user's browser with its own
    origin's rules, and could otherwise read and drive every local conversation. Such a
    request still says ``Host: evil.example``.

    A reverse proxy on the same machine defeats both checks (it connects from loopback and
    often names the upstream ``127.0.0.1``), so a request that carries any forwarding header
    is refused: behind a proxy, configure authentication.
    """

    async def authenticate(self, request: HTTPConnection, *, allow_cookie: bool) -> Principal:
        server = request.scope.get("server")
        if server and server[0] and not is_loopback(str(server[0])):
            raise AuthError("Authentication is required.")
        if forwarded(request):
            raise AuthError(
                "Anonymous local mode does not answer requests forwarded by a proxy; "
                "configure authentication to serve through one."
            )
        host = request.headers.get("host")
        if host is not None and not is_loopback(_host_name(host)):
            raise AuthError(
                "Anonymous local mode only answers requests addressed to localhost or a "
                "loopback address."
            )
        # Tools of the ichor protocol call the user's APIs with the token the client sent,
        # verbatim, whether or not this server checks it.
        token = _bearer(request)
        return replace(ANONYMOUS, token=token) if token else ANONYMOUS


FORWARDING_HEADERS = (
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "via",
)
"""Headers a reverse proxy adds: their presence means the caller is not on this machine."""
_FORWARDING = frozenset(name.encode("latin-1") for name in FORWARDING_HEADERS)
"""The same as ASGI names them (lower case bytes), to look for them in one pass."""


def forwarded(request: HTTPConnection) -> bool:
    """Whether a proxy forwarded ``request`` (it carries one of :data:`FORWARDING_HEADERS`):
    then where it connects from says nothing of the caller."""
    return any(name in _FORWARDING for name, _ in request.headers.raw)


def _host_name(host: str) -> str:
    """The name in a ``Host`` header, without the port (``[::1]:8000`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.partition(":")[0].rstrip(".")


class JwtAuthenticator:
    """Bearer (or cookie) JWTs verified with a secret, a public key or a JWKS endpoint."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._jwks: jwt.PyJWKClient | None = None
        self._key: Any
        if settings.jwt_secret:
            self._key, self._algorithms = settings.jwt_secret, ["HS256"]
        elif settings.jwt_public_key:
            self._key, self._algorithms = settings.jwt_public_key, ["RS256"]
        elif settings.jwks_url:
            self._jwks = jwt.PyJWKClient(settings.jwks_url, cache_keys=True)
            self._key, self._algorithms = None, ["RS256"]
        else:
            raise ValueError("JwtAuthenticator needs a secret, a public key or a JWKS URL")

    async def authenticate(self, request: HTTPConnection, *, allow_cookie: bool) -> Principal:
        token = _bearer(request)
        if token is None and allow_cookie:
            token = request.cookies.get(self._settings.session_cookie) or None
        if token is None:
            raise AuthError("Missing credentials: send 'Authorization: Bearer <token>'.")
        claims = await self._verify(token)
        user = claims.get(self._settings.user_claim)
        if not isinstance(user, str | int) or user == "":
            raise AuthError(f"The token has no '{self._settings.user_claim}' claim.")
        tenants = _tenants(claims, self._settings.tenant_claim)
        return Principal(
            user_id=str(user),
            tenant_id=tenants[0] if len(tenants) == 1 else None,
            token=token,
            claims=claims,
        )

    async def _verify(self, token: str) -> dict[str, Any]:
        key = self._key
        try:
            if self._jwks is not None:
                # PyJWKClient fetches over the network (and caches); keep it off the loop.
                signing_key = await anyio.to_thread.run_sync(
                    self._jwks.get_signing_key_from_jwt, token
                )
                if signing_key.key_type != "RSA":
                    # An IdP may also publish EC or symmetric keys; a token that names one
                    # cannot be RS256 (and PyJWT would raise TypeError, not a token error).
                    raise AuthError("The token's signing key is not an RS256 key.")
                key = signing_key.key
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=self._algorithms,
                audience=self._settings.jwt_audience,
                issuer=self._settings.jwt_issuer,
                leeway=self._settings.jwt_leeway_seconds,
                # A token without an expiry would be good forever once leaked, and the workflow
                # assistant protocol forwards it to every tool's downstream API.
                options={"require": ["exp"]},
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("The token has expired.") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError(f"The token has no '{exc.claim}' claim.") from None
        except jwt.PyJWKClientError:
            raise AuthError("The token's signing key could not be found.") from None
        except jwt.InvalidTokenError:
            raise AuthError("The token is not valid.") from None
        return claims


def _bearer(request: HTTPConnection) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise AuthError("Malformed Authorization header: expected 'Bearer <token>'.")
    return value.strip()


def _tenants(claims: dict[str, Any], claim: str | None) -> Sequence[str]:
    if claim is None:
        return ()
    value = claims.get(claim)
    if isinstance(value, str | int):
        return (str(value),)
    if isinstance(value, list):
        return tuple(str(v) for v in value if isinstance(v, str | int))
    return ()


def for_tenant(principal: Principal, tenant: str, settings: Settings) -> Principal:
    """The principal acting for ``tenant`` (the data playground's ``brandRef``). When tenants
    are configured the token must grant it (else :class:`Forbidden`) and the run is scoped to
    it; otherwise the name is only request metadata and the principal is unchanged."""
    if settings.tenant_claim is None:
        return principal
    if tenant not in _tenants(principal.claims, settings.tenant_claim):
        raise Forbidden(f"This account has no access to brand {tenant!r}.")
    return replace(principal, tenant_id=tenant)


def roles(claims: dict[str, Any], claim: str) -> frozenset[str]:
    """The roles a token's ``claims`` carry in ``claim``: a list of names, or one string of
    names separated by spaces or commas (as OAuth scopes are); a dotted ``claim`` reaches
    into objects (Keycloak's ``realm_access.roles``). Anything else carries none."""
    value: Any = claims
    for part in claim.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str):
        return frozenset(value.replace(",", " ").split())
    if isinstance(value, list):
        return frozenset(str(v) for v in value if isinstance(v, str | int))
    return frozenset()


def is_admin(principal: Principal, settings: Settings, authenticator: Authenticator) -> bool:
    """Whether ``principal`` is an administrator (see :mod:`agentstream.server.auth`)."""
    if isinstance(authenticator, AnonymousAuthenticator):
        return True  # the local user, alone on this machine's loopback
    return settings.admin_role in roles(principal.claims, settings.roles_claim)


def authenticator_from_settings(settings: Settings) -> Authenticator:
    if settings.auth_configured:
        return JwtAuthenticator(settings)
    return AnonymousAuthenticator()
