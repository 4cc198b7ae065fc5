"""Server settings, read from the environment once at start-up.

Every knob has an ``AGENTSTREAM_*`` variable so a deployment is configured without code::

    AGENTSTREAM_HOST / AGENTSTREAM_PORT          where to listen (127.0.0.1:8000)
    AGENTSTREAM_JWT_SECRET                       HS256 shared secret
    AGENTSTREAM_JWT_PUBLIC_KEY                   RS256 public key (PEM text, or @/path/to/key.pem)
    AGENTSTREAM_JWKS_URL                         RS256 keys from a JWKS endpoint
    AGENTSTREAM_JWT_AUDIENCE / _ISSUER           checked when set
    AGENTSTREAM_JWT_USER_CLAIM                   the user id claim (sub)
    AGENTSTREAM_JWT_TENANT_CLAIM                 the tenant claim; when set, tenants are enforced
    AGENTSTREAM_SESSION_COOKIE                   cookie carrying the same JWT (agentstream_session)
    AGENTSTREAM_CORS_ORIGINS                     comma-separated origins allowed to call the API
                                                 from their pages (the embedded chat tray's
                                                 host pages), with credentials; * for any
                                                 origin, without credentials
    AGENTSTREAM_MAX_BODY_BYTES                   request body limit (1 MiB)
    AGENTSTREAM_HEARTBEAT_SECONDS                SSE heartbeat comment interval (15; 0 = off)
    AGENTSTREAM_DRAIN_SECONDS                    how long a worker told to stop (SIGTERM)
                                                 lets its runs finish before it hands them
                                                 over or stops them (30; see
                                                 agentstream.server.drain)
    AGENTSTREAM_ON_DISCONNECT                    cancel | detach: what a client that hangs up
                                                 does to its run, for every protocol (unset:
                                                 each protocol's own default)
    AGENTSTREAM_DOUBLE_TEXTING                   reject | queue | interrupt: what a message
                                                 sent while its conversation's answer is
                                                 still streaming does (reject; a request
                                                 may choose its own where its protocol
                                                 has room, see agentstream.runs.turns)
    AGENTSTREAM_DIAGNOSTICS                      include diagnostics in final answers
                                                 (on in anonymous local mode, else off)
    AGENTSTREAM_DATABASE_URL                     the conversation store's (see agentstream.store)
    AGENTSTREAM_DATA_DIR                         where local files live (./data): the SQLite
                                                 database and the attachments' content
    AGENTSTREAM_ATTACHMENT_STORAGE               files (under the data directory),
                                                 database (shared by every host of a
                                                 PostgreSQL deployment) or s3://bucket/prefix
                                                 (an S3-compatible bucket; endpoint and keys
                                                 from the AWS_* variables): attachments'
                                                 content
    AGENTSTREAM_MAX_ATTACHMENT_BYTES             bytes per uploaded file (20 MiB)
    AGENTSTREAM_MAX_ATTACHMENTS_PER_MESSAGE      files one message may carry (10)
    AGENTSTREAM_MAX_ATTACHMENT_BYTES_PER_MESSAGE bytes of a message's files together (50 MiB)
    AGENTSTREAM_UNREFERENCED_ATTACHMENT_HOURS    uploads no message took are removed after (24)
    AGENTSTREAM_CONFIG                           a TOML configuration file for what does not
                                                 fit a variable (per-model windows, inputs
                                                 and prices in its [models] table, limits
                                                 per tenant in its [limits] table)
    AGENTSTREAM_ADMIN_ROLE                       the role of administrators (admin)
    AGENTSTREAM_JWT_ROLES_CLAIM                  the claim holding a token's roles (roles; a
                                                 dotted path reaches into an object:
                                                 realm_access.roles)
    AGENTSTREAM_METRICS                          on: serve Prometheus metrics at /metrics, to
                                                 loopback clients and administrators (off)
    AGENTSTREAM_METRICS_PORT                     serve them on this port instead, to anyone
                                                 who reaches it
    AGENTSTREAM_RUN_LEASE_SECONDS                with Redis: how long a worker's hold on its
                                                 runs lasts unrenewed, so how soon the runs
                                                 of a worker that died are taken over (15)
    AGENTSTREAM_RUN_TAKEOVER                     off: the runs of a worker that died end as
                                                 interrupted instead of being taken over (on)
    AGENTSTREAM_REDIS_PREFIX                     with Redis: the prefix of its keys, one per
                                                 deployment sharing a Redis (agentstream:)
    AGENTSTREAM_LIMIT_REQUESTS_PER_MINUTE        each user's limits (unset: none); per tenant
    AGENTSTREAM_LIMIT_CONCURRENT_RUNS            in the configuration file's [limits] table
    AGENTSTREAM_LIMIT_TOKENS_PER_DAY             (see agentstream.runs.limits)

Traces are configured with OpenTelemetry's own ``OTEL_*`` variables (see
:mod:`agentstream.telemetry`): they are on when an exporter is named
(``OTEL_TRACES_EXPORTER``) or an OTLP endpoint is given.

No authentication configured means *anonymous local mode*, which :func:`Settings.check` allows
only on a loopback address: a server reachable from the network must authenticate its callers.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Literal, cast

from agentstream.attachments.limits import AttachmentLimits
from agentstream.errors import ConfigurationError, SettingsError
from agentstream.origins import is_origin
from agentstream.runs.limits import Limits
from agentstream.runs.request import DOUBLE_TEXTING_POLICIES, DoubleTexting

__all__ = [
    "ATTACHMENT_STORAGES",
    "DISCONNECT_POLICIES",
    "AttachmentStorage",
    "DisconnectPolicy",
    "Settings",
    "SettingsError",
    "is_loopback",
    "tracing_configured",
]

AttachmentStorage = str
"""Where attachments' content is kept: ``files``, ``database``, or an S3-compatible bucket
named as ``s3://bucket/prefix``."""
ATTACHMENT_STORAGES: tuple[str, ...] = ("files", "database", "s3://bucket/prefix")

DisconnectPolicy = Literal["cancel", "detach"]
"""What a client that hangs up does to its run: ``cancel`` stops it (the partial answer is
stored, marked cancelled); ``detach`` lets it finish and be stored, to be followed or resumed
from any worker."""
DISCONNECT_POLICIES: tuple[DisconnectPolicy, ...] = ("cancel", "detach")


_TRUE = {"1", "true", "yes", "on"}
MIN_SECRET_BYTES = 32
"""HS256 needs a key as long as its hash (RFC 7518 §3.2)."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The server's configuration, from ``AGENTSTREAM_*`` environment variables
    (:meth:`from_env`) or given in code; secrets are left out of ``repr``."""

    host: str = "127.0.0.1"
    port: int = 8000
    jwt_secret: str | None = field(default=None, repr=False)
    jwt_public_key: str | None = field(default=None, repr=False)
    jwks_url: str | None = None
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_leeway_seconds: float = 0.0
    user_claim: str = "sub"
    tenant_claim: str | None = None
    """When set, the data playground's ``brandRef`` must be one of this claim's values, or the
    request is 403."""
    session_cookie: str = "agentstream_session"
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 1024 * 1024
    heartbeat_seconds: float = 15.0
    write_timeout_seconds: float = 60.0
    """A stream whose client reads nothing for this long is stopped (0: never)."""
    drain_seconds: float = 30.0
    """How long a worker told to stop (``SIGTERM``) lets its runs finish and their clients
    read them to the end, answering new runs 503, before it hands the rest over to another
    worker (with Redis) or stops them as interrupted (:mod:`agentstream.server.drain`)."""
    diagnostics: bool | None = None
    """Diagnostics on the tray's ``complete``; ``None``: on in anonymous local mode (where the
    tray protocol's clients expect them on every answer), off when authenticated."""
    model_titles: bool = False
    """After a conversation's first answer, ask the model for a better title (one more,
    small model call per conversation)."""
    on_disconnect: DisconnectPolicy | None = None
    """Overrides every protocol's own disconnect policy (``None``: each keeps its own)."""
    double_texting: DoubleTexting = "reject"
    """What a message for a conversation whose answer is still streaming does, unless its
    request chooses (:mod:`agentstream.runs.turns`)."""
    default_context_window: int = 128_000
    """The window, in tokens, by which a run reads the conversation of a model whose window is
    not known (``AGENTSTREAM_DEFAULT_CONTEXT_WINDOW``; :mod:`agentstream.runs.reading`)."""
    config_file: Path | None = None
    """The TOML configuration file (``AGENTSTREAM_CONFIG``): tables of settings that do not
    fit an environment variable, such as ``[models]`` (:mod:`agentstream.providers.profiles`)."""
    redis_url: str | None = field(default=None, repr=False)
    """Share runs between workers through Redis (replay, cancel from any worker); without
    it runs live in this process only. Not in ``repr``: the URL may hold a password."""
    redis_prefix: str = "agentstream:"
    """With Redis: the prefix of every key written (``AGENTSTREAM_REDIS_PREFIX``). The
    workers of one deployment share it; deployments that share a Redis need one each, as a
    worker takes over the runs of dead workers it finds under its prefix."""
    run_lease_seconds: float = 15.0
    """With Redis: how long a worker's lease on its runs lasts unrenewed (it renews it every
    third of that), so how soon a dead worker's runs are taken over."""
    run_takeover: bool = True
    """With Redis: a run whose worker died is continued by another worker (see
    ``docs/guides/durable-runs.md``); off, it ends as interrupted."""
    admin_role: str = "admin"
    """Callers whose token carries this role are administrators: they read everyone's
    usage, and ``/metrics`` from anywhere (the local user is one in anonymous mode)."""
    roles_claim: str = "roles"
    """The claim holding a token's roles: a list, or a string of roles separated by spaces
    or commas; a dotted path reaches into an object (``realm_access.roles``)."""
    metrics: bool = False
    """Serve Prometheus metrics (``GET /metrics``, or on :attr:`metrics_port`)."""
    metrics_port: int | None = None
    """Serve metrics on this port of :attr:`host` instead of at ``/metrics`` (implies
    :attr:`metrics`): to anyone who reaches it, as Prometheus scrapes."""
    tracing: bool = False
    """Export OpenTelemetry traces (set from the ``OTEL_*`` variables, see
    :mod:`agentstream.telemetry`)."""
    data_dir: Path = Path("data")
    """Where local files live (``AGENTSTREAM_DATA_DIR``): attachments' content under
    ``attachments/`` when they are kept as files."""
    attachment_storage: AttachmentStorage = "files"
    """Where attachments' content is kept: files under :attr:`data_dir`, the store's
    database (every host of a deployment reads it), or an S3-compatible bucket
    (``s3://bucket/prefix``, see :mod:`agentstream.attachments.object_store`)."""
    attachments: AttachmentLimits = field(default_factory=AttachmentLimits)
    """What a file and a message may carry (``AGENTSTREAM_MAX_ATTACHMENT*``), and how long
    an upload no message took is kept."""
    limits: Limits = field(default_factory=Limits)
    """Each user's limits, from ``AGENTSTREAM_LIMIT_*`` (the rest are in the configuration
    file or code, see :mod:`agentstream.runs.limits`)."""

    @property
    def metrics_on(self) -> bool:
        return self.metrics or self.metrics_port is not None

    @property
    def auth_configured(self) -> bool:
        return bool(self.jwt_secret or self.jwt_public_key or self.jwks_url)

    @property
    def anonymous(self) -> bool:
        """Anonymous local mode: no authentication, loopback only."""
        return not self.auth_configured

    @property
    def diagnostics_on(self) -> bool:
        return self.anonymous if self.diagnostics is None else self.diagnostics

    def check(self) -> None:
        """Refuse configurations that would expose an unauthenticated server."""
        if self.anonymous and not is_loopback(self.host):
            raise SettingsError(
                f"no authentication is configured and the server would listen on {self.host!r}; "
                "set AGENTSTREAM_JWT_SECRET, AGENTSTREAM_JWT_PUBLIC_KEY or AGENTSTREAM_JWKS_URL, "
                "or bind to 127.0.0.1"
            )
        if self.jwt_secret and len(self.jwt_secret.encode()) < MIN_SECRET_BYTES:
            # A short HS256 secret can be brute-forced offline from one captured token, and
            # then any user can be impersonated (RFC 7518 §3.2 asks for at least 256 bits).
            raise SettingsError(
                f"AGENTSTREAM_JWT_SECRET must be at least {MIN_SECRET_BYTES} bytes long"
            )
        for origin in self.cors_origins:
            if origin != "*" and not is_origin(origin):
                # A browser sends the origin bare: "https://app.example/" or a path never
                # matches it, and the page would only see a CORS failure with no reason.
                raise SettingsError(
                    f"AGENTSTREAM_CORS_ORIGINS: {origin!r} is not an origin; write it as "
                    "scheme://host[:port], without a path or a trailing slash "
                    "(e.g. https://app.example.com), or * for any origin"
                )
        if self.max_body_bytes <= 0:
            raise SettingsError("AGENTSTREAM_MAX_BODY_BYTES must be positive")
        if not self.run_lease_seconds >= 1:  # NaN too
            # Leases are whole seconds in Redis, renewed every third of one.
            raise SettingsError("AGENTSTREAM_RUN_LEASE_SECONDS must be at least 1")
        if not _is_attachment_storage(self.attachment_storage):
            raise SettingsError(
                "AGENTSTREAM_ATTACHMENT_STORAGE must be files, database or "
                f"s3://bucket/prefix, not {self.attachment_storage!r}"
            )
        attachments = self.attachments
        if min(attachments.max_file_bytes, attachments.max_message_bytes) <= 0:
            raise SettingsError("attachment byte limits must be positive")
        if attachments.max_files_per_message < 0:
            raise SettingsError("AGENTSTREAM_MAX_ATTACHMENTS_PER_MESSAGE must be 0 or more")
        if self.heartbeat_seconds < 0:
            raise SettingsError("AGENTSTREAM_HEARTBEAT_SECONDS must be 0 (off) or positive")
        if not 0 <= self.drain_seconds < math.inf:  # NaN too
            raise SettingsError(
                "AGENTSTREAM_DRAIN_SECONDS must be 0 (stop at once) or a positive number of "
                f"seconds, not {self.drain_seconds}"
            )
        if self.metrics_port is not None and not 0 < self.metrics_port < 65536:
            raise SettingsError("AGENTSTREAM_METRICS_PORT must be a port number (1 to 65535)")
        if self.metrics_port is not None and self.metrics_port == self.port:
            raise SettingsError(
                "AGENTSTREAM_METRICS_PORT must differ from the server's own port "
                f"({self.port}); unset it to serve /metrics on the server's port"
            )
        if self.double_texting not in DOUBLE_TEXTING_POLICIES:
            raise SettingsError(
                "AGENTSTREAM_DOUBLE_TEXTING must be reject, queue or interrupt, "
                f"not {self.double_texting!r}"
            )
        if self.default_context_window < 1:
            raise SettingsError(
                "AGENTSTREAM_DEFAULT_CONTEXT_WINDOW must be a number of tokens over 0, "
                f"not {self.default_context_window}"
            )
        if self.on_disconnect is not None and self.on_disconnect not in DISCONNECT_POLICIES:
            raise SettingsError(
                f"AGENTSTREAM_ON_DISCONNECT must be cancel or detach, not {self.on_disconnect!r}"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Settings from ``env`` (default ``os.environ``); keyword ``overrides`` win."""
        e = os.environ if env is None else env

        def get(name: str) -> str | None:
            value = e.get(f"AGENTSTREAM_{name}")
            return value.strip() if value and value.strip() else None

        try:
            values: dict[str, object] = {
                "host": get("HOST") or cls.host,
                "port": int(get("PORT") or cls.port),
                "jwt_secret": get("JWT_SECRET"),
                "jwt_public_key": _read_key(get("JWT_PUBLIC_KEY")),
                "jwks_url": get("JWKS_URL"),
                "jwt_audience": get("JWT_AUDIENCE"),
                "jwt_issuer": get("JWT_ISSUER"),
                "jwt_leeway_seconds": float(get("JWT_LEEWAY_SECONDS") or 0),
                "user_claim": get("JWT_USER_CLAIM") or cls.user_claim,
                "tenant_claim": get("JWT_TENANT_CLAIM"),
                "session_cookie": get("SESSION_COOKIE") or cls.session_cookie,
                "cors_origins": tuple(
                    o.strip() for o in (get("CORS_ORIGINS") or "").split(",") if o.strip()
                ),
                "max_body_bytes": int(get("MAX_BODY_BYTES") or cls.max_body_bytes),
                "heartbeat_seconds": float(get("HEARTBEAT_SECONDS") or cls.heartbeat_seconds),
                "write_timeout_seconds": float(
                    get("WRITE_TIMEOUT_SECONDS") or cls.write_timeout_seconds
                ),
                "drain_seconds": float(get("DRAIN_SECONDS") or cls.drain_seconds),
                "diagnostics": _flag(get("DIAGNOSTICS")),
                "redis_url": get("REDIS_URL"),
                "redis_prefix": get("REDIS_PREFIX") or cls.redis_prefix,
                "run_lease_seconds": float(get("RUN_LEASE_SECONDS") or cls.run_lease_seconds),
                "run_takeover": (get("RUN_TAKEOVER") or "on").lower() in _TRUE,
                "config_file": Path(config) if (config := get("CONFIG")) else None,
                "on_disconnect": cast(
                    DisconnectPolicy | None, (get("ON_DISCONNECT") or "").lower() or None
                ),
                "double_texting": (get("DOUBLE_TEXTING") or cls.double_texting).lower(),
                "default_context_window": int(
                    get("DEFAULT_CONTEXT_WINDOW") or cls.default_context_window
                ),
                "model_titles": (get("MODEL_TITLES") or "").lower() in _TRUE,
                "admin_role": get("ADMIN_ROLE") or cls.admin_role,
                "roles_claim": get("JWT_ROLES_CLAIM") or cls.roles_claim,
                "metrics": (get("METRICS") or "").lower() in _TRUE,
                "metrics_port": int(port) if (port := get("METRICS_PORT")) else None,
                "tracing": tracing_configured(e),
                "data_dir": Path(get("DATA_DIR") or "data"),
                "attachment_storage": _attachment_storage(get("ATTACHMENT_STORAGE")),
                "attachments": _attachment_limits(get),
                "limits": Limits.from_env(e),
            }
        except ConfigurationError as exc:
            raise SettingsError(str(exc)) from None
        except ValueError as exc:
            raise SettingsError(f"invalid server setting: {exc}") from None
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


def _attachment_storage(value: str | None) -> str:
    """The storage named, its keyword in lower case (a bucket's name is kept as written)."""
    value = (value or "files").strip()
    return value if value.lower().startswith("s3://") else value.lower()


def _is_attachment_storage(value: str) -> bool:
    if value in ("files", "database"):
        return True
    bucket = value[len("s3://") :].split("/", 1)[0] if value.lower().startswith("s3://") else ""
    return bool(bucket)


def _attachment_limits(get: Callable[[str], str | None]) -> AttachmentLimits:
    default = AttachmentLimits()
    hours = get("UNREFERENCED_ATTACHMENT_HOURS")
    return AttachmentLimits(
        max_file_bytes=int(get("MAX_ATTACHMENT_BYTES") or default.max_file_bytes),
        max_files_per_message=int(
            get("MAX_ATTACHMENTS_PER_MESSAGE") or default.max_files_per_message
        ),
        max_message_bytes=int(get("MAX_ATTACHMENT_BYTES_PER_MESSAGE") or default.max_message_bytes),
        unreferenced_after=(timedelta(hours=float(hours)) if hours else default.unreferenced_after),
    )


def tracing_configured(env: Mapping[str, str]) -> bool:
    """Whether OpenTelemetry's variables ask for traces: an exporter named
    (``OTEL_TRACES_EXPORTER``, other than ``none``) or an OTLP endpoint given, and the SDK
    not disabled (``OTEL_SDK_DISABLED``)."""
    if (env.get("OTEL_SDK_DISABLED") or "").strip().lower() in _TRUE:
        return False
    exporter = (env.get("OTEL_TRACES_EXPORTER") or "").strip().lower()
    if exporter:
        return exporter != "none"
    return any(
        (env.get(name) or "").strip()
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def _read_key(value: str | None) -> str | None:
    if value is None or not value.startswith("@"):
        return value
    return Path(value[1:]).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=64)
def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _flag(value: str | None) -> bool | None:
    """An on/off setting, or ``None`` when it is not set."""
    return None if value is None else value.lower() in _TRUE
