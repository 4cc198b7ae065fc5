"""Every error agentstream raises on purpose, in one tree under :class:`AgentstreamError`.

``except AgentstreamError`` catches what the library refuses or reports; the branches say what
kind of problem it is, and the server answers each branch with one HTTP status (in one place,
:mod:`agentstream.server.errors`)::

    AgentstreamError
    ├── RefusedRequest (ValueError)        400, names the offending field
    │   ├── InvalidConversationId            conversation_id
    │   ├── InvalidCursor                    cursor
    │   ├── InvalidBranch                    a message a branch cannot start from
    │   ├── ModelUnavailable                 model
    │   └── (agentstream.chat) ActionError, UnknownAction, MissingAction, InvalidContextValue
    ├── AuthError                          401
    ├── Forbidden                          403
    ├── ConversationBusy                   409, names the answer in progress
    ├── LimitExceeded                      429 with Retry-After, names the limit
    ├── TooLarge (ValueError)              413, names the limit (an attachment, a message's)
    ├── UnsupportedMediaType (ValueError)  415 (an attachment's content)
    ├── NotFound (LookupError)             404, the same for "missing" and "someone else's"
    │   ├── ConversationNotFound
    │   ├── AttachmentNotFound
    │   ├── MessageNotFound
    │   ├── RunNotFound
    │   └── UnknownDialect
    ├── Unavailable (RuntimeError)         503
    │   ├── BrokerUnavailable
    │   └── Draining                         with Retry-After: the worker is stopping
    ├── ConfigurationError (ValueError)    the deployment cannot work as configured
    │   ├── SettingsError
    │   ├── StoreNotMigrated (RuntimeError)
    │   └── AgentLoadError
    ├── UnknownRun (LookupError)           a store write for a run the store did not start
    ├── InvalidArguments (ValueError)      a tool call's arguments; the model is told
    └── ProviderError                      a model call failed; the run fails with its message
        └── ContextOverflow                  the model refused a request longer than its window

Each class also keeps the built-in base it always had (in brackets), so code written as
``except ValueError`` or ``except LookupError`` goes on working. The classes are importable
from the modules that raise them too (``agentstream.store.InvalidCursor``,
``agentstream.server.SettingsError``, ``agentstream.providers.ProviderError``...): they are
the same objects.
"""

from __future__ import annotations

from typing import ClassVar, Literal

__all__ = [
    "AgentLoadError",
    "AgentstreamError",
    "AttachmentNotFound",
    "AuthError",
    "BrokerUnavailable",
    "ConfigurationError",
    "ContextOverflow",
    "ConversationBusy",
    "ConversationNotFound",
    "Draining",
    "ErrorKind",
    "Forbidden",
    "InvalidArguments",
    "InvalidConversationId",
    "InvalidBranch",
    "InvalidCursor",
    "LimitExceeded",
    "MessageNotFound",
    "ModelUnavailable",
    "NotFound",
    "ProviderError",
    "RefusedRequest",
    "RunNotFound",
    "SettingsError",
    "StoreNotMigrated",
    "TooLarge",
    "Unavailable",
    "UnknownDialect",
    "UnknownRun",
    "UnsupportedMediaType",
    "ViewNotFound",
]


class AgentstreamError(Exception):
    """The base of every error agentstream raises on purpose (see the module's tree)."""


# --- a request refused: 400 ----------------------------------------------------------------


class RefusedRequest(AgentstreamError, ValueError):
    """A request that cannot be served as sent: a 400 naming ``field``, with a message safe
    to show the client. The run's hooks raise it from ``RunHooks.check`` (an unknown server
    action, a context value out of its choices); the store and the model catalogue for ids,
    cursors and models they cannot serve."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        """The request field at fault, as the client spelled it (``context.brandRef``)."""


class InvalidConversationId(RefusedRequest):
    """A conversation id we cannot store: 1 to 64 letters, digits, ``-``, ``_``, ``.``, ``:``
    (UUIDs in any of their usual spellings are normalized)."""

    def __init__(self, message: str, field: str = "conversation_id") -> None:
        super().__init__(field, message)


class InvalidBranch(RefusedRequest):
    """A branch asked of a message that cannot start one: only a user message is edited or
    answered again (an answer is regenerated through the question it answers)."""

    def __init__(self, message: str, field: str = "message_id") -> None:
        super().__init__(field, message)


class InvalidCursor(RefusedRequest):
    """A paging cursor that this store did not hand out."""

    def __init__(self, message: str, field: str = "cursor") -> None:
        super().__init__(field, message)


class ModelUnavailable(RefusedRequest):
    """The model is not offered, or its provider cannot be created here."""

    def __init__(self, message: str, field: str = "model") -> None:
        super().__init__(field, message)


# --- who is asking: 401, 403 ---------------------------------------------------------------


class AuthError(AgentstreamError):
    """Missing or invalid credentials (401). The message is safe to return."""


class Forbidden(AgentstreamError):
    """Authenticated, but not allowed to do this (403)."""


# --- the conversation is answering: 409 ----------------------------------------------------


class ConversationBusy(AgentstreamError):
    """A message for a conversation while an answer to an earlier one is still being written,
    under the ``reject`` policy (409, before anything is stored; see
    :mod:`agentstream.runs.turns`). ``run_id`` is the answer in progress: the client stops it
    (``POST /api/chat/runs/{run_id}/cancel``) or sends again asking to queue or to interrupt."""

    def __init__(self, conversation_id: str, run_id: str | None) -> None:
        stop = (
            f"(run {run_id}): stop it first (POST /api/chat/runs/{run_id}/cancel)"
            if run_id
            else "(it is starting on another server): wait for it"
        )
        super().__init__(
            f"An answer is in progress in this conversation {stop}, or send the message with "
            'double_texting "queue" or "interrupt"'
        )
        self.conversation_id = conversation_id
        self.run_id = run_id or None
        """The answer in progress (``None``: another process's, not stored yet)."""


# --- too many: 429 -------------------------------------------------------------------------


class LimitExceeded(AgentstreamError):
    """A user or tenant is over one of its limits (429, before any stream starts): the
    message says which, ``limit`` names it (``requests_per_minute``, ``concurrent_runs``,
    ``tokens_per_day``, ``cost_per_day``), ``scope`` whose it is (``user`` or ``tenant``)
    and ``retry_after`` when trying again may work, in whole seconds (the ``Retry-After``
    header). See :mod:`agentstream.runs.limits`."""

    def __init__(self, message: str, *, limit: str, scope: str, retry_after: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.scope = scope
        self.retry_after = max(1, retry_after)


# --- what was sent cannot be kept: 413, 415 ----------------------------------------------


class TooLarge(AgentstreamError, ValueError):
    """Over a size limit (413): a file over the bytes a file may have, a message with more
    files or bytes than a message may carry. ``limit`` names the setting, so the client (and
    whoever reads its message) knows which limit it met and how large it is."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class UnsupportedMediaType(AgentstreamError, ValueError):
    """Content this server does not take (415): a kind it does not accept, or a file whose
    content is not what its name or declared type says."""


# --- not found: 404 ------------------------------------------------------------------------


class NotFound(AgentstreamError, LookupError):
    """No such thing *for this caller*: missing and someone else's look the same on purpose,
    so nobody learns what other users have. ``detail`` is the client's message (the
    exception's own message may name an id)."""

    detail: ClassVar[str] = "Not found"


class ConversationNotFound(NotFound):
    """No such conversation for this principal: it does not exist, or belongs to someone else.
    Both cases look the same to the caller on purpose (HTTP 404)."""

    detail = "Conversation not found"


class AttachmentNotFound(NotFound):
    """No such attachment for this principal: it does not exist, was removed, or belongs to
    someone else (whether read directly or named in a message)."""

    detail = "Attachment not found"


class MessageNotFound(NotFound):
    """No such message in this conversation (as the conversation API shows its ids: a user
    message's own, an answer's run id)."""

    detail = "Message not found"


class ViewNotFound(NotFound):
    """No such interactive view for this conversation: its source or its ``ui://`` resource
    is unknown, or (for a call back) the conversation never drew it."""

    detail = "View not found"


class RunNotFound(NotFound):
    """No such run for this principal (unknown, expired, or someone else's)."""

    detail = "Run not found"


class UnknownDialect(NotFound):
    """A run was started by a dialect this server does not serve (so it cannot be continued
    in it)."""

    detail = "This run was not started by a protocol this server serves"


# --- a part of the deployment is down: 503 -------------------------------------------------


class Unavailable(AgentstreamError, RuntimeError):
    """Something the request needs cannot be reached right now; trying later may work.
    ``detail`` is the client's message."""

    detail: ClassVar[str] = "Temporarily unavailable"


class BrokerUnavailable(Unavailable):
    """The shared run log cannot be reached (Redis is down): a run of another worker can be
    neither followed nor stopped until it returns. Runs of this worker are unaffected."""

    detail = "Runs of other workers cannot be reached right now"


class Draining(Unavailable):
    """This worker is stopping (a deploy, a scale-down): it lets its runs finish and takes
    no new ones. Another worker, or this server once restarted, will; ``retry_after`` says
    when to try again, in whole seconds (the ``Retry-After`` header)."""

    detail = "This server is restarting; try again in a moment"
    retry_after: ClassVar[int] = 1


# --- the deployment itself -----------------------------------------------------------------


class ConfigurationError(AgentstreamError, ValueError):
    """The server, store or agent is configured in a way that cannot work; raised when it is
    built or started, never in answer to a request."""


class SettingsError(ConfigurationError):
    """The configuration cannot work (e.g. no auth on a public address)."""


class StoreNotMigrated(ConfigurationError, RuntimeError):
    """The database has not been migrated (``agentstream db upgrade``)."""


class AgentLoadError(ConfigurationError):
    """A ``module:attribute`` reference (``agentstream serve app:agent``) that cannot be
    imported, or names something other than what was asked for."""


# --- inside a run ----------------------------------------------------------------------------


class UnknownRun(AgentstreamError, LookupError):
    """``append_messages``/``finish_run`` for a run that ``start_run`` did not start in that
    conversation."""


class InvalidArguments(AgentstreamError, ValueError):
    """The model's arguments do not fit the tool's schema. The message tells the model what
    was wrong so it can try again."""


ErrorKind = Literal[
    "auth",
    "rate_limited",
    "overloaded",
    "bad_request",
    "context_overflow",
    "timeout",
    "network",
    "provider",
]
"""What went wrong in a model call, for retry decisions and for the client's message."""


class ProviderError(AgentstreamError):
    """A model call failed. ``message`` is safe to show a user: it never contains an API key,
    a full request or a stack trace. ``retryable`` says whether trying again may help."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status_code = status_code
        self.retryable = retryable

    def __repr__(self) -> str:
        return f"ProviderError(kind={self.kind!r}, message={self.message!r})"


class ContextOverflow(ProviderError):
    """The vendor refused the request as longer than the model's context window (its own
    kind, ``context_overflow``, because the caller can do something about it: send less).
    ``window`` is the window the vendor stated, in tokens, and ``requested`` the size it
    refused, when its message says them; either may be ``None``."""

    def __init__(
        self,
        message: str,
        *,
        window: int | None = None,
        requested: int | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__("context_overflow", message, status_code=status_code)
        self.window = window
        self.requested = requested
