"""A tool's file (a screenshot it took) in its card: the chat tray's live ``tool_complete``
and final ``tool_history`` name it, and so does the stored conversation the web UI reloads;
the AI SDK's stream adds it to the answer as a file part after the tool's output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.server.conftest import Serve
from tests.server.helpers import datas, parse_sse, stream_text
from tests.server.test_aisdk import run_client
from tests.server.test_attachments import ANN, SPEC_REQUESTS, start
from tests.server.test_attachments_tools import PAGE, TURNS, screenshot


def test_a_tools_file_is_shown_live_in_the_final_answer_and_after_a_reload(
    serve: Serve, tmp_path: Path
) -> None:
    served = start(serve, tmp_path, turns=TURNS, tools=[screenshot])
    path, body = SPEC_REQUESTS["tray"]
    with served.http:
        response, text = stream_text(served.http, path, json=body, headers=ANN)
        assert response.status_code == 200
        frames = datas(parse_sse(text))
        (complete,) = [f for f in frames if f["type"] == "tool_complete"]
        (live,) = complete["attachments"]
        assert (live["name"], live["media_type"], live["size"]) == (
            "page.png",
            "image/png",
            len(PAGE),
        )
        (entry,) = frames[-1]["payload"]["tool_history"]
        assert entry["attachments"] == [live]
        (listed,) = served.http.get("/api/conversations", headers=ANN).json()["items"]
        stored = served.http.get(f"/api/conversations/{listed['id']}", headers=ANN).json()
        shown = served.http.get(f"/api/attachments/{live['id']}", headers=ANN)
    (_, answer) = stored["messages"]
    (call,) = answer["tool_history"]
    assert call["attachments"] == [live]
    assert shown.status_code == 200 and shown.content == PAGE  # the caller reads it back


def test_a_call_without_files_is_shown_as_before(serve: Serve, tmp_path: Path) -> None:
    served = start(serve, tmp_path, turns=({"text": "Seen."},))
    path, body = SPEC_REQUESTS["tray"]
    with served.http:
        response, text = stream_text(served.http, path, json=body, headers=ANN)
    assert response.status_code == 200
    assert "attachments" not in text


def test_the_ai_sdk_shows_a_tools_file_after_its_output_live_and_after_a_reload(
    serve: Serve, tmp_path: Path
) -> None:
    """Through the SDK's own client: the ``file`` chunk after the tool's output becomes a
    file part of the answer, and the stored chat shows it in the same place."""
    served = start(serve, tmp_path, turns=TURNS, tools=[screenshot], auth=False)
    with served.http:
        sent, loaded = run_client(served.live, "chat-shot", {"send": "Show me"}, {"load": True})
        shown = served.http.get(f"/api/attachments/{attachment_id(sent)}")
    assert shown.content == PAGE
    assert sent["errors"] == loaded["errors"] == []
    kinds = [p["type"] for p in sent["message"]["parts"]]
    at = kinds.index("tool-screenshot")
    assert kinds[at + 1] == "file"
    (chunk,) = [c for c in sent["chunks"] if c["type"] == "file"]
    assert chunk["mediaType"] == "image/png" and chunk["filename"] == "page.png"
    answer = loaded["messages"][-1]
    stored = [p for p in answer["parts"] if p["type"] in ("tool-screenshot", "file")]
    assert [p["type"] for p in stored] == ["tool-screenshot", "file"]
    assert stored[1]["url"] == chunk["url"]


def attachment_id(result: dict[str, Any]) -> str:
    (chunk,) = [c for c in result["chunks"] if c["type"] == "file"]
    found: str = chunk["url"].removeprefix("/api/attachments/")
    return found
