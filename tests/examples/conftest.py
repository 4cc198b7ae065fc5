"""The live-uvicorn fixture of the server tests, for serving the examples."""

from tests.server.conftest import serve

__all__ = ["serve"]
