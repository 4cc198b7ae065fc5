"""Stream endpoints served directly (``agentstream.server.direct``) answer exactly as FastAPI
would: the same statuses and error bodies for every bad input, the same streams, the same
authentication, mounted or not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.routing import Mount

from agentstream.server.app import create_app
from agentstream.server.direct import DirectRoute, DirectRoutes
from agentstream.server.settings import Settings
from tests.server.agents import ichor_agent, tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import SECRET, LiveServer, bearer, datas, parse_sse, stream_text, token

TRAY = "/api/chat/stream"
ICHOR = "/v1/agent/chat"
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


def _served(*, through_fastapi: bool, **settings: Any) -> LiveServer:
    app = create_app(
        tray_agent(), settings=Settings(host="127.0.0.1", heartbeat_seconds=15.0, **settings)
    )
    return LiveServer(_through_fastapi(app) if through_fastapi else app).start()


@pytest.fixture
def both() -> Any:
    servers = {way: _served(through_fastapi=way == "fastapi") for way in ("direct", "fastapi")}
    yield servers
    for server in servers.values():
        server.stop()


def test_the_stream_endpoints_of_every_dialect_are_served_directly() -> None:
    app = create_app(tray_agent(), settings=Settings(host="127.0.0.1"))
    direct = app.router.middleware_stack
    assert isinstance(direct, DirectRoutes)
    for path in (TRAY, ICHOR, "/agent/stream", "/ag-ui", "/ai-sdk/chat"):
        assert ("POST", path) in direct, path
    # Query parameters (the playground's brandRef) are FastAPI's to read and validate.
    assert ("POST", "/api/agent-chat/stream") not in direct


@pytest.mark.parametrize(("case", "body", "headers"), BAD_BODIES, ids=[c[0] for c in BAD_BODIES])
def test_a_bad_body_gets_the_answer_fastapi_gives(
    both: dict[str, LiveServer], case: str, body: bytes, headers: dict[str, str]
) -> None:
    answers = {}
    for way, server in both.items():
        with server.client() as client:
            response = client.post(TRAY, content=body, headers=headers)
        answers[way] = (response.status_code, response.json())
    assert answers["direct"] == answers["fastapi"]
    assert answers["direct"][0] == 400, answers
    assert answers["direct"][1]["field"], answers


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


async def _returning_a_model(body: Body) -> Body:
    return body


def _sync_endpoint(body: Body) -> Response:
    return Response(body.text)


@pytest.mark.parametrize(
    ("endpoint", "direct"),
    [
        (_plain, True),
        (_with_request, True),
        (_with_query, False),
        (_with_sync_dependency, False),
        (_with_nested_dependency, False),
        (_returning_a_model, False),
        (_sync_endpoint, False),
    ],
)
def test_only_simple_signatures_are_served_directly(
    endpoint: Callable[..., Any], direct: bool
) -> None:
    """What FastAPI would do more for (query parameters, sub-dependencies, serializing a
    returned model, running sync code in a thread) stays FastAPI's."""
    router = APIRouter(route_class=DirectRoute)
    router.post("/x")(endpoint)
    route = router.routes[0]
    assert isinstance(route, DirectRoute)
    assert (route.plan is not None) is direct
