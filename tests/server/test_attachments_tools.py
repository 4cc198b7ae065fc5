"""A tool's image (a screenshot it took) kept as the caller's attachment: the model reads it
in the next turn, in its vendor's form, and the stored history keeps it for later turns."""

from __future__ import annotations

from pathlib import Path

from agentstream.messages import ToolResultsMessage
from agentstream.tools import ToolContext, ToolResult, tool
from tests.attachments import samples
from tests.server.conftest import Serve
from tests.server.helpers import stream_text
from tests.server.test_attachments import ANN, SPEC_REQUESTS, start

PAGE = samples.png(7, 5)


@tool
async def screenshot(ctx: ToolContext) -> ToolResult:
    """Take a screenshot of the page the user is on."""
    shot = await ctx.attach(PAGE, name="page.png")
    return ToolResult(text="Taken: the login page.", attachments=(shot,))


TURNS = (
    {"tool_calls": [{"id": "shot-1", "name": "screenshot", "arguments": {}}]},
    {"text": "The login page shows an error."},
)


def test_a_tools_image_reaches_the_model_and_stays_in_the_history(
    serve: Serve, tmp_path: Path
) -> None:
    served = start(serve, tmp_path, turns=TURNS, tools=[screenshot])
    path, body = SPEC_REQUESTS["ops"]
    with served.http:
        response, _ = stream_text(served.http, path, json=body, headers=ANN)
        assert response.status_code == 200
        (listed,) = served.http.get("/api/conversations", headers=ANN).json()["items"]
        later = {**body, "conversation_id": listed["id"], "message": "And now?"}
        response, _ = stream_text(served.http, path, json=later, headers=ANN)
        assert response.status_code == 200
    answered = served.provider.requests[1]
    results = answered.messages[-1]
    assert isinstance(results, ToolResultsMessage)
    (shot,) = results.results[0].attachments
    assert (shot.name, shot.media_type, shot.size) == ("page.png", "image/png", len(PAGE))
    assert answered.files == {shot.sha256: PAGE}
    next_run = served.provider.requests[-1]
    assert results in next_run.messages  # the stored history keeps the image
    assert next_run.files == {shot.sha256: PAGE}
