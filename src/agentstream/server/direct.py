"""Streaming endpoints served straight from the router, past FastAPI's request handling.

When many chats start at once, each waits for the start of every request ahead of it, so
what one request costs before its first event is what a burst's last user waits for, times
the burst. Measured on the chat tray's endpoint (200 runs started together, in process),
FastAPI's route matching, dependency solving and request handler took about a third of a
run's CPU, more than the run's own start; the middleware around them (CORS, body limits,
error handlers) hardly counted. So the dialects' stream endpoints are
:class:`DirectRoute`\\ s: FastAPI knows them as ordinary routes (they are in the OpenAPI
document, and FastAPI serves them wherever the app does not, such as a router included in
another application), while the app's router hands their requests to :class:`DirectRoutes`,
which does what FastAPI would do for such a simple signature with less machinery:

* the parameters it takes are a JSON body (one pydantic model), the request itself, query
  parameters of one value each (text, a number or a flag, such as the playground's
  ``brandRef``), and dependencies that take only the request (the caller's principal); an
  endpoint that asks for anything else (path parameters, repeated query parameters, nested
  dependencies, dependencies with ``yield``) is left to FastAPI;
* the body is JSON only when the request says so (``application/json`` or ``+json``):
  anything else is refused as FastAPI refuses it, since a cross-site form or an untyped
  ``Blob`` must never start a run;
* validation errors are FastAPI's :class:`~fastapi.exceptions.RequestValidationError` with
  the same locations, so the app's handlers answer them in the one error shape;
* dependencies run before the query and the body are parsed: a caller who is not
  authenticated gets its 401 whatever the request holds (FastAPI would first report
  malformed JSON), and a bad query parameter is reported before a bad body;
* while the app has ``dependency_overrides`` (tests that stand in for authentication), every
  request goes through FastAPI, which honours them.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Union, cast, get_args, get_origin

from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from agentstream.server.errors import says_json

__all__ = ["DirectRoute", "DirectRoutes"]

_NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"


@dataclass(frozen=True, slots=True)
class _Query:
    """A query parameter of one value (text, a number or a flag), validated as FastAPI
    validates it: with its declaration's constraints, under its alias."""

    name: str
    alias: str
    required: bool
    default: Any
    adapter: TypeAdapter[Any]

    def read(self, request: Request) -> Any:
        value = request.query_params.get(self.alias)
        if value is None:
            if self.required:
                missing = {"type": "missing", "loc": ("query", self.alias), "msg": "Field required"}
                raise RequestValidationError([missing])
            return self.default
        try:
            return self.adapter.validate_python(value)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            raise RequestValidationError(
                [{**error, "loc": ("query", self.alias, *error["loc"])} for error in errors]
            ) from None


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to call one endpoint: its dependencies (parameter name, or ``None`` for a route's
    own ``dependencies=[...]``), where the request goes, its query parameters and its body."""

    call: Callable[..., Awaitable[Response]]
    dependencies: tuple[tuple[str | None, Callable[[Request], Awaitable[Any]]], ...]
    request_name: str | None
    queries: tuple[_Query, ...]
    body: tuple[str, type[BaseModel]] | None
    """The body's parameter name and model."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        raw = await request.body() if self.body is not None else b""
        arguments: dict[str, Any] = {}
        for name, dependency in self.dependencies:
            value = await dependency(request)
            if name is not None:
                arguments[name] = value
        if self.request_name is not None:
            arguments[self.request_name] = request
        for query in self.queries:
            arguments[query.name] = query.read(request)
        if self.body is not None:
            name, model = self.body
            arguments[name] = _parse(model, raw, request)
        response = await self.call(**arguments)
        await response(scope, receive, send)


def _parse(model: type[BaseModel], raw: bytes, request: Request) -> BaseModel:
    if not raw:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}]
        )
    if not says_json(request.headers.get("content-type")):
        raise RequestValidationError(
            [{"type": "model_attributes_type", "loc": ("body",), "msg": _NOT_AN_OBJECT}]
        )
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid":
        # Pydantic's parser gives up at a nesting depth that ``json`` reads: parsed that way,
        # such a body meets the model's own depth check, whose message says what is wrong.
        try:
            return model.model_validate(json.loads(raw))
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        except (ValueError, RecursionError):
            pass
    raise RequestValidationError([{**error, "loc": ("body", *error["loc"])} for error in errors])


class DirectRoute(APIRoute):
    """An ``APIRoute`` that :class:`DirectRoutes` may serve (use it as an ``APIRouter``'s
    ``route_class``). Only endpoints that return a response themselves and take nothing but
    a JSON body, the request, single-valued query parameters and request-only dependencies
    qualify (:attr:`plan`); FastAPI serves the others as usual."""

    @property
    def plan(self) -> _Plan | None:
        return _plan(self.dependant, self.endpoint)


def _plan(dependant: Dependant, endpoint: Callable[..., Any]) -> _Plan | None:
    if not inspect.iscoroutinefunction(endpoint) or not _returns_response(endpoint):
        return None
    if _has_other_inputs(dependant) or len(dependant.body_params) > 1:
        return None
    queries = []
    for field in dependant.query_params:
        info = field.field_info
        if not _is_one_value(info.annotation):
            return None  # a list, a model: FastAPI's own rules
        queries.append(
            _Query(
                name=field.name,
                alias=field.alias,
                required=info.is_required(),
                default=None if info.is_required() else info.get_default(call_default_factory=True),
                # The declared type with its constraints (``Query(min_length=1)``), as FastAPI
                # builds it; spelled through ``cast`` since the type is only known now.
                adapter=TypeAdapter(cast(Any, Annotated)[info.annotation, info]),
            )
        )
    dependencies = []
    for dependency in dependant.dependencies:
        call = dependency.call
        if call is None or not inspect.iscoroutinefunction(call):
            return None  # a sync or ``yield`` dependency, or a security scheme's object
        if dependency.dependencies or dependency.body_params or dependency.query_params:
            return None
        if _has_other_inputs(dependency):
            return None
        if dependency.request_param_name is None or len(_parameters(call)) != 1:
            return None
        dependencies.append((dependency.name, call))
    body = None
    if dependant.body_params:
        field = dependant.body_params[0]
        annotation = field.field_info.annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        body = (field.name, annotation)
    return _Plan(
        call=endpoint,
        dependencies=tuple(dependencies),
        request_name=dependant.request_param_name,
        queries=tuple(queries),
        body=body,
    )


_ONE_VALUE = (str, int, float, bool, type(None))


def _is_one_value(annotation: Any) -> bool:
    """Text, a number or a flag, or a union of them (``str | None``)."""
    if annotation in _ONE_VALUE:
        return True
    return get_origin(annotation) in (Union, UnionType) and all(
        member in _ONE_VALUE for member in get_args(annotation)
    )


def _has_other_inputs(dependant: Dependant) -> bool:
    """Inputs besides the body, the request, dependencies and query parameters."""
    return bool(
        dependant.path_params
        or dependant.header_params
        or dependant.cookie_params
        or dependant.websocket_param_name
        or dependant.http_connection_param_name
        or dependant.response_param_name
        or dependant.background_tasks_param_name
        or dependant.security_scopes_param_name
        or dependant.own_oauth_scopes
    )


def _parameters(call: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    return inspect.signature(call).parameters


def _returns_response(endpoint: Callable[..., Any]) -> bool:
    """Annotated to return a response (an annotation that cannot be resolved, as FastAPI
    would resolve it from the endpoint's module, leaves the route to FastAPI)."""
    try:
        returned = inspect.signature(endpoint, eval_str=True).return_annotation
    except NameError:
        return False
    return isinstance(returned, type) and issubclass(returned, Response)


class DirectRoutes:
    """The app router's first step: a request for one of ``routes`` (method and path, under
    the app's ``root_path``) goes straight to its endpoint; every other request, and every
    request while the app has ``dependency_overrides``, goes on to ``app`` (FastAPI's
    router). Errors propagate to the app's exception handlers, as a route's do."""

    def __init__(
        self, app: ASGIApp, routes: Iterable[DirectRoute], overrides: Mapping[Any, Any]
    ) -> None:
        self.app = app
        self._overrides = overrides
        self._plans: dict[tuple[str, str], _Plan] = {}
        for route in routes:
            plan = route.plan
            if plan is not None:
                for method in route.methods or ():
                    self._plans.setdefault((method, route.path), plan)

    def __contains__(self, key: tuple[str, str]) -> bool:
        """Whether ``(method, path)`` is served directly (for tests and diagnostics)."""
        return key in self._plans

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._overrides:
            plan = self._plans.get((scope["method"], _route_path(scope)))
            if plan is not None:
                await plan(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The path below the app's mount point, as Starlette's router matches it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("/", ""):
        return path[len(root) :]
    return path
