"""The server tests' live-uvicorn fixture, reused for running chat mechanisms through the
dialect endpoints (``serve(agent, hooks=..., **settings)``)."""

from tests.server.conftest import serve

__all__ = ["serve"]
