"""The ops example's REST API and sign-in page, mounted by the server under
``/example-api`` (``ServerConfig.mounts``), and the sessions that authenticate the chat.

* ``GET /sign-in`` a sign-in page; ``POST /sign-in`` (form: ``username``, ``password``,
  ``next``) sets the session cookie and returns to the chat; ``POST /sign-out``.
* ``GET /me``, ``GET /tickets[?status=open]``, ``GET /tickets/{id}``,
  ``POST /tickets/{id}/close``, ``GET /monitoring``, ``PUT /monitoring {"online": false}``
  (simulates an outage of the monitoring service). All but the sign-in page need a session.

The chat endpoints accept the same session, through :class:`OpsSessions`.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

import html
import os
from typing import Annotated, Any, Literal

import anyio
from fastapi import Depends, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, StrictBool
from starlette.requests import HTTPConnection

from agentstream.principal import Principal
from agentstream.server.auth import AuthError
from examples.ops.database import DEMO_ACCOUNTS, DEMO_PASSWORD, SESSION_SECONDS, OpsDatabase

__all__ = ["MOUNT", "OpsSessions", "ops_api", "session_cookie"]

MOUNT = "/example-api"
SIGN_IN = f"{MOUNT}/sign-in"


def session_cookie() -> str:
    """The cookie the chat endpoints read (``AGENTSTREAM_SESSION_COOKIE``)."""
    return os.environ.get("AGENTSTREAM_SESSION_COOKIE") or "agentstream_session"


class OpsSessions:
    """Authenticates chat requests by the example's sign-in session: the session cookie, or
    the same token as ``Authorization: Bearer``."""

    def __init__(self, db: OpsDatabase) -> None:
        self.db = db

    async def authenticate(self, request: HTTPConnection, *, allow_cookie: bool) -> Principal:
        token = _token(request, allow_cookie=allow_cookie)
        user = await anyio.to_thread.run_sync(self.db.session_user, token) if token else None
        if user is None:
            raise AuthError(f"Sign in first: open {SIGN_IN}.")
        return Principal(user_id=user)


def _token(request: HTTPConnection, *, allow_cookie: bool) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(session_cookie()) if allow_cookie else None


class MonitoringState(BaseModel):
    """``PUT /monitoring``'s body: ``{"online": false}`` (a JSON boolean; ``"yes"`` or ``1`` is
    refused rather than guessed at)."""

    model_config = ConfigDict(extra="forbid")
    online: StrictBool


def ops_api(db: OpsDatabase) -> FastAPI:
    api = FastAPI(title="ops example API", docs_url=None, redoc_url=None, openapi_url=None)

    async def signed_in(request: Request) -> str:
        token = _token(request, allow_cookie=True)
        user = await anyio.to_thread.run_sync(db.session_user, token) if token else None
        if user is None:
            raise HTTPException(401, f"Sign in first: open {SIGN_IN}.")
        return user

    User = Annotated[str, Depends(signed_in)]

    @api.get("/sign-in", response_class=HTMLResponse)
    def sign_in_page(next: str = "/") -> HTMLResponse:
        return HTMLResponse(_page(next_path=_local(next)))

    @api.post("/sign-in")
    def sign_in(
        username: Annotated[str, Form(max_length=100)],
        password: Annotated[str, Form(max_length=200)],
        next: Annotated[str, Form(max_length=500)] = "/",
    ) -> Response:
        token = db.sign_in(username.strip().lower(), password)
        if token is None:
            page = _page(next_path=_local(next), error="Wrong name or password.")
            return HTMLResponse(page, status_code=401)
        response = RedirectResponse(_local(next), status_code=303)
        response.set_cookie(
            session_cookie(),
            token,
            max_age=SESSION_SECONDS,
            httponly=True,
            samesite="lax",
            path="/",
        )
        return response

    @api.post("/sign-out")
    def sign_out(request: Request) -> Response:
        token = _token(request, allow_cookie=True)
        if token:
            db.sign_out(token)
        response = RedirectResponse(SIGN_IN, status_code=303)
        response.delete_cookie(session_cookie(), path="/")
        return response

    @api.get("/me")
    def me(user: User) -> dict[str, str]:
        return {"user": user, "display_name": db.display_name(user)}

    @api.get("/tickets")
    def list_tickets(
        user: User, status: Literal["open", "closed"] | None = None
    ) -> dict[str, list[dict[str, Any]]]:
        return {"tickets": [t.as_dict() for t in db.tickets(status=status)]}

    @api.get("/tickets/{ticket_id}")
    def get_ticket(ticket_id: int, user: User) -> dict[str, Any]:
        ticket = db.ticket(ticket_id)
        if ticket is None:
            raise HTTPException(404, f"No ticket #{ticket_id}.")
        return ticket.as_dict()

    @api.post("/tickets/{ticket_id}/close")
    def close_ticket(ticket_id: int, user: User) -> dict[str, Any]:
        ticket = db.close_ticket(ticket_id)
        if ticket is None:
            raise HTTPException(404, f"No ticket #{ticket_id}.")
        return ticket.as_dict()

    @api.get("/monitoring")
    def monitoring(user: User) -> dict[str, Any]:
        return {"online": db.monitoring_online(), "services": db.services()}

    @api.put("/monitoring")
    def set_monitoring(state: MonitoringState, user: User) -> dict[str, bool]:
        db.set_monitoring_online(state.online)
        return {"online": state.online}

    return api


def _local(path: str) -> str:
    """Only redirect within this site (``/c/123``), never to another host (``//evil``)."""
    if path.startswith("/") and not path.startswith("//") and "\\" not in path:
        return path
    return "/"


def _page(*, next_path: str, error: str | None = None) -> str:
    accounts = ", ".join(f"<code>{name}</code>" for name in DEMO_ACCOUNTS)
    problem = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · Ops agent</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font: 16px system-ui, sans-serif; background: #f4f5f7; display: grid;
       place-items: center; min-height: 100vh; margin: 0; }}
form {{ background: white; padding: 2rem; border-radius: 12px; width: 20rem;
       box-shadow: 0 2px 12px rgb(0 0 0 / 0.08); }}
label {{ display: block; margin: 0.8rem 0 0.3rem; }}
input {{ width: 100%; box-sizing: border-box; padding: 0.5rem; font: inherit; }}
button {{ margin-top: 1.2rem; width: 100%; padding: 0.6rem; font: inherit; border: 0;
         border-radius: 8px; background: #2457d6; color: white; cursor: pointer; }}
.hint {{ color: #555; font-size: 0.85rem; }} .error {{ color: #b00020; }}
</style></head>
<body><form method="post" action="{SIGN_IN}">
<h1>Ops agent</h1>
{problem}
<label for="username">Name</label>
<input id="username" name="username" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<input type="hidden" name="next" value="{html.escape(next_path)}">
<button type="submit">Sign in</button>
<p class="hint">Demo accounts: {accounts}, password <code>{DEMO_PASSWORD}</code>.</p>
</form></body></html>"""
