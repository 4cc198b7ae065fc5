"""What a page on another site needs from the server to embed the chat tray: the script at
its stable address, and CORS that lets the named origins call the API with the user's token
or session cookie (and nobody else)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentstream.errors import SettingsError
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from tests.server.agents import tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, bearer, token

TRAY = "/api/chat/stream"
ASK = {"message": "hi"}
HOST = "http://127.0.0.1:5050"
"""The host page's origin: another port is another origin."""


def _serve_static(tmp_path: Path, **settings: object) -> LiveServer:
    (tmp_path / "index.html").write_text("<!doctype html><title>UI</title>")
    (tmp_path / "embed").mkdir()
    (tmp_path / "embed" / "agentstream-chat.js").write_text(
        "customElements.define('x-y', class {})"
    )
    app = create_app(tray_agent(), settings=Settings(**settings), static_dir=tmp_path)  # type: ignore[arg-type]
    return LiveServer(app).start()


def test_the_script_is_served_at_its_stable_address_and_revalidated(tmp_path: Path) -> None:
    server = _serve_static(tmp_path, cors_origins=(HOST,))
    try:
        with server.client() as client:
            script = client.get("/embed/agentstream-chat.js", headers={"Origin": HOST})
            other = client.get(
                "/embed/agentstream-chat.js", headers={"Origin": "https://x.example"}
            )
            missing = client.get("/embed/nothing.js")
    finally:
        server.stop()
    assert script.status_code == 200
    assert script.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert script.headers["cache-control"] == "no-cache"
    assert script.text.startswith("customElements.define")
    # A module script or a fetch from the host page may read it; another site's page only
    # through a classic <script src>, which needs no CORS.
    assert script.headers["access-control-allow-origin"] == HOST
    assert "access-control-allow-origin" not in other.headers
    # Not the UI's HTML, which a script tag would fail to parse.
    assert missing.status_code == 404 and missing.json() == {"detail": "Not Found"}


def test_an_unbuilt_script_is_a_404_that_says_how_to_build_it(tmp_path: Path) -> None:
    app = create_app(tray_agent(), settings=Settings(), static_dir=tmp_path / "missing")
    server = LiveServer(app).start()
    try:
        with server.client() as client:
            script = client.get("/embed/agentstream-chat.js")
    finally:
        server.stop()
    assert script.status_code == 404
    assert "npm run build" in script.json()["detail"]


def test_a_named_origin_calls_the_tray_with_a_token_or_the_session_cookie(serve: Serve) -> None:
    server = serve(tray_agent(), auth=True, cors_origins=(HOST,))
    origin = {"Origin": HOST}
    with server.client() as client:
        preflight = client.options(
            "/api/chat/stream",
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        with_token = client.get("/api/chat/config", headers={**origin, **bearer(token("alice"))})
        cookie = {"Cookie": f"agentstream_session={token('alice')}"}
        with_cookie = client.post(TRAY, json=ASK, headers={**origin, **cookie})
        signed_out = client.post(TRAY, json=ASK, headers=origin)
        elsewhere = client.post(
            TRAY, json=ASK, headers={"Origin": "https://evil.example", **cookie}
        )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == HOST
    assert preflight.headers["access-control-allow-credentials"] == "true"
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    for response in (with_token, with_cookie):
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == HOST
        assert response.headers["access-control-allow-credentials"] == "true"
    # The tray reads the run id to resume an answer after the host page reloads.
    assert "x-run-id" in with_cookie.headers["access-control-expose-headers"].lower()
    assert '"type": "complete"' in with_cookie.text or '"type":"complete"' in with_cookie.text
    assert signed_out.status_code == 401
    # The browser refuses another site's page the answer: no CORS header names it.
    assert "access-control-allow-origin" not in elsewhere.headers


@pytest.mark.parametrize(
    "origin",
    [
        "https://app.example/",
        "https://app.example/chat",
        "app.example",
        "https://",
        "ftp://x.example",
    ],
)
def test_an_origin_with_a_path_or_without_a_scheme_is_refused_at_start(origin: str) -> None:
    with pytest.raises(SettingsError, match="is not an origin"):
        create_app(tray_agent(), settings=Settings(cors_origins=(origin,)))


def test_origins_from_the_environment() -> None:
    settings = Settings.from_env(
        {"AGENTSTREAM_CORS_ORIGINS": "https://app.example, http://127.0.0.1:5173,http://[::1]:3000"}
    )
    assert settings.cors_origins == (
        "https://app.example",
        "http://127.0.0.1:5173",
        "http://[::1]:3000",
    )
    settings.check()
    Settings(cors_origins=("*",)).check()
