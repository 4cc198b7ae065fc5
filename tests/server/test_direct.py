"""Stream endpoints served directly (``agentstream.server.direct``) answer exactly as FastAPI
would: the same statuses and error bodies for every bad input, the same streams, the same
authentication, mounted or not."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.routing import Mount

from agentstream import Agent
from agentstream.providers.registry import ModelRegistry
from agentstream.server.app import create_app
from agentstream.server.direct import DirectRoute, DirectRoutes
from agentstream.server.settings import Settings
from tests.server.agents import ichor_agent, playground_agent, tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import SECRET, LiveServer, bearer, datas, parse_sse, stream_text, token

TRAY = "/api/chat/stream"
ICHOR = "/v1/agent/chat"
PLAYGROUND = "/api/chat/agent-chat/stream"
JSON = {"Content-Type": "application/json"}

BAD_BODIES: list[tuple[str, bytes, dict[str, str]]] = [
    ("malformed", b'{"message": "hi",', JSON),
    ("empty", b"", JSON),
    ("not an object", b'["hi"]', JSON),
    ("untyped", b'{"message": "hi"}', {}),
    ("text/plain", b'{"message": "hi"}', {"Content-Type": "text/plain"}),
    ("form", b"message=hi", {"Content-Type": "application/x-www-form-urlencoded"}),
    ("wrong type", b'{"message": 42}', JSON),
    ("wrong nested type", b'{"message": "hi", "action": {"action": ""}}', JSON),
    ("too deep", b'{"message": "hi", "context": ' + b'{"a": ' * 300 + b"1" + b"}" * 301, JSON),
    ("bad approvals", b'{"message": "", "approvals": [{"call_id": 1}]}', JSON),
]


def _through_fastapi(app: FastAPI) -> FastAPI:
    """``app`` with every request handled by FastAPI: an override (of a dependency no route
    has) turns the direct path off, as it does for tests that stand in for a dependency."""
    app.dependency_overrides[_unused] = _unused
    return app


def _unused() -> None:
    """A dependency no route uses."""


def _served(agent: Agent, *, through_fastapi: bool) -> LiveServer:
    settings = Settings(host="127.0.0.1", heartbeat_seconds=15.0)
    models = ModelRegistry([], discover=False)
    app = create_app(agent, settings=settings, models=models)
    return LiveServer(_through_fastapi(app) if through_fastapi else app).start()


def _both(agent: Callable[[], Agent]) -> Iterator[dict[str, LiveServer]]:
    """The same app served directly and through FastAPI."""
    ways = ("direct", "fastapi")
    servers = {way: _served(agent(), through_fastapi=way == "fastapi") for way in ways}
    yield servers
    for server in servers.values():
        server.stop()


@pytest.fixture
def both() -> Iterator[dict[str, LiveServer]]:
    yield from _both(tray_agent)


@pytest.fixture
def playground_both() -> Iterator[dict[str, LiveServer]]:
    """The data playground's endpoint reads a query parameter (``brandRef``) as well."""
    yield from _both(playground_agent)


def _answers(
    servers: dict[str, LiveServer], path: str, **request: Any
) -> dict[str, tuple[int, Any]]:
    answers = {}
    for way, server in servers.items():
        with server.client() as client:
            response = client.post(path, **request)
        answers[way] = (response.status_code, response.json())
    return answers


def test_the_stream_endpoints_of_every_dialect_are_served_directly() -> None:
    app = create_app(tray_agent(), settings=Settings(host="127.0.0.1"))
    direct = app.router.middleware_stack
    assert isinstance(direct, DirectRoutes)
    for path in (TRAY, ICHOR, PLAYGROUND, "/agent/stream", "/ag-ui", "/ai-sdk/chat"):
        assert ("POST", path) in direct, path
    # Path parameters are FastAPI's to read and validate.
    assert ("POST", "/api/chat/runs/{run_id}/cancel") not in direct


@pytest.mark.parametrize(("case", "body", "headers"), BAD_BODIES, ids=[c[0] for c in BAD_BODIES])
def test_a_bad_body_gets_the_answer_fastapi_gives(
    both: dict[str, LiveServer], case: str, body: bytes, headers: dict[str, str]
) -> None:
    answers = _answers(both, TRAY, content=body, headers=headers)
    assert answers["direct"] == answers["fastapi"]
    assert answers["direct"][0] == 400, answers
    assert answers["direct"][1]["field"], answers


PLAYGROUND_ASK = {"brandRef": "brand_123", "model": "scripted:script", "content": "Show 10"}
BAD_PLAYGROUND: list[tuple[str, str, dict[str, Any]]] = [
    ("no brandRef", "", PLAYGROUND_ASK),
    ("empty brandRef", "?brandRef=", PLAYGROUND_ASK),
    ("another brand", "?brandRef=brand_999", PLAYGROUND_ASK),
    ("bad body", "?brandRef=brand_123", {**PLAYGROUND_ASK, "temperature": 2.5}),
    ("both bad", "?brandRef=", {**PLAYGROUND_ASK, "stream": "sometimes"}),
]


@pytest.mark.parametrize(
    ("case", "query", "body"), BAD_PLAYGROUND, ids=[c[0] for c in BAD_PLAYGROUND]
)
def test_a_bad_query_gets_the_answer_fastapi_gives(
    playground_both: dict[str, LiveServer], case: str, query: str, body: dict[str, Any]
) -> None:
    answers = _answers(playground_both, PLAYGROUND + query, json=body)
    assert answers["direct"] == answers["fastapi"]
    assert answers["direct"][0] == 400, answers


def test_a_playground_stream_is_the_same_either_way(
    playground_both: dict[str, LiveServer],
) -> None:
    streams = {}
    for way, server in playground_both.items():
        with server.client() as client:
            response, text = stream_text(
                client, PLAYGROUND + "?brandRef=brand_123&structure=tables", json=PLAYGROUND_ASK
            )
        assert response.status_code == 200, text
        streams[way] = [message.event for message in parse_sse(text)]
    assert streams["direct"] == streams["fastapi"]
    assert "final" in streams["direct"]


def test_json_nested_past_any_parser_is_malformed_json(both: dict[str, LiveServer]) -> None:
    """Deeper than Python's ``json`` can read: FastAPI answers a bare ``detail``; the direct
    path says which field, as every other 400 does."""
    body = b'{"message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with both["direct"].client() as client:
        response = client.post(TRAY, content=body, headers=JSON)
    assert response.status_code == 400
    assert response.json() == {"detail": "body: malformed JSON", "field": "body"}


def test_a_good_body_streams_the_same_either_way(both: dict[str, LiveServer]) -> None:
    streams = {}
    for way, server in both.items():
        with server.client() as client:
            response, text = stream_text(client, TRAY, json={"message": "Find CRISPR articles"})
        assert response.status_code == 200
        assert response.headers["x-run-id"]
        streams[way] = [(frame["type"], frame.get("text")) for frame in datas(parse_sse(text))]
    assert streams["direct"] == streams["fastapi"]
    assert streams["direct"][-1] == ("complete", None)


def test_credentials_are_checked_before_the_body_is_read(serve: Serve) -> None:
    """A caller without credentials learns nothing about what its body would do."""
    server = serve(ichor_agent(), auth=True)
    ask = {"message": "hi", "context_type": "workflow"}
    with server.client() as client:
        anonymous = client.post(ICHOR, content=b'{"message": ', headers=JSON)
        forged = client.post(ICHOR, json=ask, headers=bearer(token(secret="x" * len(SECRET))))
        signed, text = stream_text(client, ICHOR, json=ask, headers=bearer(token("alice")))
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == "Bearer"
    assert forged.status_code == 401
    assert signed.status_code == 200
    assert "message_complete" in text


def test_a_mounted_app_is_served_directly_under_its_prefix() -> None:
    app = create_app(tray_agent(), settings=Settings(host="127.0.0.1", heartbeat_seconds=15.0))
    outer = Starlette(routes=[Mount("/assistant", app=app)])
    server = LiveServer(outer).start()  # type: ignore[arg-type]
    try:
        with server.client() as client:
            response, text = stream_text(client, "/assistant" + TRAY, json={"message": "hi"})
            config = client.get("/assistant/api/chat/config")  # FastAPI's, under the mount
    finally:
        server.stop()
    assert response.status_code == 200
    assert datas(parse_sse(text))[-1]["type"] == "complete"
    assert config.status_code == 200


class Body(BaseModel):
    text: str


async def _principal(request: Request) -> str:
    return "someone"


def _sync_principal(request: Request) -> str:
    return "someone"


async def _nested(who: Annotated[str, Depends(_principal)]) -> str:
    return who


async def _plain(body: Body, who: Annotated[str, Depends(_principal)]) -> Response:
    return Response(body.text + who)


async def _with_request(request: Request, body: Body) -> Response:
    return Response(body.text)


async def _with_query(body: Body, q: Annotated[str, Query()]) -> Response:
    return Response(body.text + q)


async def _with_sync_dependency(
    body: Body, who: Annotated[str, Depends(_sync_principal)]
) -> Response:
    return Response(body.text + who)


async def _with_nested_dependency(body: Body, who: Annotated[str, Depends(_nested)]) -> Response:
    return Response(body.text + who)


async def _with_repeated_query(body: Body, q: Annotated[list[str], Query()]) -> Response:
    return Response(body.text + ",".join(q))


async def _with_path(body: Body, run_id: str) -> Response:
    return Response(body.text + run_id)


async def _returning_a_model(body: Body) -> Body:
    return body


def _sync_endpoint(body: Body) -> Response:
    return Response(body.text)


@pytest.mark.parametrize(
    ("endpoint", "direct"),
    [
        (_plain, True),
        (_with_request, True),
        (_with_query, True),
        (_with_repeated_query, False),
        (_with_sync_dependency, False),
        (_with_nested_dependency, False),
        (_with_path, False),
        (_returning_a_model, False),
        (_sync_endpoint, False),
    ],
)
def test_only_simple_signatures_are_served_directly(
    endpoint: Callable[..., Any], direct: bool
) -> None:
    """What FastAPI would do more for (path parameters, repeated query parameters,
    sub-dependencies, serializing a returned model, running sync code in a thread) stays
    FastAPI's."""
    router = APIRouter(route_class=DirectRoute)
    router.post("/x/{run_id}" if endpoint is _with_path else "/x")(endpoint)
    route = router.routes[0]
    assert isinstance(route, DirectRoute)
    assert (route.plan is not None) is direct
