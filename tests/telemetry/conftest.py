"""The server tests' live-uvicorn fixture, reused for traces and metrics."""

from tests.server.conftest import serve

__all__ = ["serve"]
