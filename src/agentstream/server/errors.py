"""HTTP errors before a stream starts, in one JSON shape for every endpoint.

``{"detail": "<field>: <what is wrong>", "field": "<field>"}`` with 400 for malformed JSON or a
missing or invalid field (FastAPI would answer 422; the clients expect 400, and naming the field
lets a client highlight it), 401 for credentials, 403 for a tenant the token does not grant,
404 for an unknown conversation, run or attachment, 409 for a message sent while its
conversation's answer is still streaming (with ``run_id`` naming that answer and ``stop`` the
path that stops it), 413 for an oversized body or file (with
``limit`` naming the limit), 415 for a file of a kind the server does not take, 429 for a
user or tenant
over one of its limits (with ``Retry-After``, and ``limit`` and ``scope`` naming it), 503 when
a run of another worker cannot be reached (Redis is down), and 503 with ``Retry-After`` for a
new run on a worker that is stopping (:mod:`agentstream.server.drain`; the answer closes
the connection, so the retry reaches another worker). Once a stream has started, errors
are the dialect's own ``error`` event instead (see :mod:`agentstream.server.sse`).

This is the one place where the library's errors (:mod:`agentstream.errors`) become statuses:
routes let :class:`~agentstream.errors.RefusedRequest`, :class:`~agentstream.errors.NotFound`
and the others propagate, and :func:`install_error_handlers` answers each branch of the tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentstream.errors import (
    AuthError,
    ConversationBusy,
    Draining,
    Forbidden,
    LimitExceeded,
    NotFound,
    RefusedRequest,
    TooLarge,
    Unavailable,
    UnsupportedMediaType,
)
from agentstream.server.limits import BODY_PROBLEM

__all__ = [
    "ApiError",
    "bad_request",
    "document_errors",
    "install_error_handlers",
    "validation_error_body",
]


class ApiError(Exception):
    """An error answer: status, a safe message and, for 400, the offending field."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        field: str | None = None,
        sign_in_url: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.field = field
        self.sign_in_url = sign_in_url

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"detail": self.detail}
        if self.field is not None:
            body["field"] = self.field
        if self.sign_in_url is not None:
            body["sign_in_url"] = self.sign_in_url
        headers = {"WWW-Authenticate": "Bearer"} if self.status == 401 else None
        return JSONResponse(body, status_code=self.status, headers=headers)


def bad_request(field: str, message: str) -> ApiError:
    return ApiError(400, f"{field}: {message}", field=field)


NOT_AN_OBJECT = "expected a JSON object"


def says_json(content_type: str | None) -> bool:
    """``application/json`` or ``application/<anything>+json``, parameters aside: the only
    bodies read as JSON (a cross-site form or an untyped ``Blob`` never starts a run)."""
    if not content_type:
        return False
    main, _, sub = content_type.partition(";")[0].strip().lower().partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


def validation_error_body(errors: Sequence[Any]) -> tuple[str, str]:
    """The field and message of the first pydantic/FastAPI validation error."""
    first = errors[0] if errors else {}
    kind = first.get("type")
    location = [str(p) for p in first.get("loc", ()) if not _union_tag(p)]
    if location and location[0] in ("body", "query", "path", "header", "cookie"):
        location = location[1:]
    if kind == "json_invalid":
        return "body", "malformed JSON"
    if kind == BODY_PROBLEM:  # the whole body's check names the field itself
        context = first.get("ctx") or {}
        return str(context.get("field", "body")), str(context.get("message", "invalid value"))
    field = ".".join(location) or "body"
    if kind == "missing":
        return field, "field required"
    if kind == "extra_forbidden":
        return field, "unknown field"
    if kind in ("string_too_short", "string_pattern_mismatch"):
        return field, "must not be empty"
    if kind in ("model_attributes_type", "model_type", "dict_type") and field == "body":
        return field, NOT_AN_OBJECT
    # A validator's own ValueError reads "Value error, <its message>": the message is enough.
    return field, str(first.get("msg", "invalid value")).removeprefix("Value error, ")


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "none", "bytes", "dict", "list"})


def _union_tag(part: object) -> bool:
    """Pydantic names the member of a union that failed in ``loc`` (``conversation_id.str``);
    the client only needs the field."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part)


def install_error_handlers(app: FastAPI, *, sign_in_url: str | None = None) -> None:
    """Our JSON error shapes for every error the routes raise. A 401 names ``sign_in_url``
    (the application's sign-in page) when there is one, so a client that is not signed in,
    and so cannot read the chat configuration, still learns where to go."""

    async def on_api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return exc.response()

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        field, message = validation_error_body(exc.errors())
        sent = request.headers.get("content-type")
        if (field, message) == ("body", NOT_AN_OBJECT) and not says_json(sent):
            # The body may be perfectly good JSON: what is wrong is how it was labelled.
            message = f"expected Content-Type: application/json, got {sent or 'none'}"
        return bad_request(field, message).response()

    async def on_auth(request: Request, exc: Exception) -> JSONResponse:
        return ApiError(401, str(exc), sign_in_url=sign_in_url).response()

    async def on_forbidden(request: Request, exc: Exception) -> JSONResponse:
        return ApiError(403, str(exc)).response()

    async def on_refused(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RefusedRequest)
        return bad_request(exc.field, str(exc)).response()

    async def on_limit(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, LimitExceeded)
        return JSONResponse(
            {"detail": str(exc), "limit": exc.limit, "scope": exc.scope},
            status_code=429,
            headers={"Retry-After": str(exc.retry_after)},
        )

    async def on_busy(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ConversationBusy)
        body: dict[str, Any] = {"detail": str(exc)}
        if exc.run_id is not None:
            body |= {"run_id": exc.run_id, "stop": f"/api/chat/runs/{exc.run_id}/cancel"}
        return JSONResponse(body, 409)

    async def on_too_large(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, TooLarge)
        return JSONResponse({"detail": str(exc), "limit": exc.limit}, status_code=413)

    async def on_unsupported(request: Request, exc: Exception) -> JSONResponse:
        return ApiError(415, str(exc)).response()

    async def on_not_found(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, NotFound)
        return ApiError(404, exc.detail).response()

    async def on_unavailable(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, Unavailable)
        answer = ApiError(503, exc.detail).response()
        if isinstance(exc, Draining):
            answer.headers["Retry-After"] = str(exc.retry_after)
            answer.headers["Connection"] = "close"
        return answer

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(AuthError, on_auth)
    app.add_exception_handler(Forbidden, on_forbidden)
    app.add_exception_handler(RefusedRequest, on_refused)
    app.add_exception_handler(ConversationBusy, on_busy)
    app.add_exception_handler(LimitExceeded, on_limit)
    app.add_exception_handler(TooLarge, on_too_large)
    app.add_exception_handler(UnsupportedMediaType, on_unsupported)
    app.add_exception_handler(NotFound, on_not_found)
    app.add_exception_handler(Unavailable, on_unavailable)
    app.add_exception_handler(StarletteHTTPException, on_http)


_ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "detail": {"type": "string", "description": "What is wrong, safe to show"},
        "field": {"type": "string", "description": "The offending field (400 only)"},
        "sign_in_url": {
            "type": "string",
            "description": "Where to sign in (401 only, when the application has a sign-in page)",
        },
        "limit": {
            "type": "string",
            "description": "The limit a caller is over (413 and 429): for 429 "
            "requests_per_minute, concurrent_runs, tokens_per_day or cost_per_day; for 413 "
            "max_attachment_bytes, max_attachments_per_message, "
            "max_attachment_bytes_per_message or image_pixels",
        },
        "scope": {"type": "string", "description": "Whose limit it is (429 only): user or tenant"},
        "run_id": {
            "type": "string",
            "description": "The answer in progress in the conversation (409 only)",
        },
        "stop": {
            "type": "string",
            "description": "The path that stops that answer, to POST to (409 only)",
        },
    },
    "required": ["detail"],
}
_ERROR_RESPONSES = {
    "400": "Malformed JSON, or a missing or invalid field (named in `field`)",
    "401": "Missing or invalid credentials",
    "413": "Request body over the configured limit",
}


def document_errors(app: FastAPI) -> None:
    """Make the OpenAPI document say what the server does: 400 with our error body where
    FastAPI would document its 422, plus 401 and 413."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        if "Error" in schemas:
            return schema
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        schemas["Error"] = _ERROR_SCHEMA
        content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                responses = operation.setdefault("responses", {})
                responses.pop("422", None)
                for status, description in _ERROR_RESPONSES.items():
                    responses.setdefault(status, {"description": description, "content": content})
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
