"""The open protocols' own forms of files, sent by their official clients unchanged: the AI
SDK's ``sendMessage({text, files})`` (a data URL, then after a reload the URL this server
showed) and AG-UI's image content (base64 data). Each becomes an attachment of the caller
that the model receives, and that later turns and reloads still show."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentstream.messages import UserMessage
from tests import node_clients
from tests.attachments import samples
from tests.server.conftest import Serve
from tests.server.helpers import PROCESS_START
from tests.server.test_attachments import Served, start

IMAGE = samples.png(6, 6)
IMAGE_BASE64 = base64.b64encode(IMAGE).decode()


@pytest.fixture
def served(serve: Serve, tmp_path: Path) -> Iterator[Served]:
    started = start(serve, tmp_path, auth=False)
    yield started
    started.http.close()


def user_messages(served: Served) -> list[UserMessage]:
    return [m for r in served.provider.requests for m in r.messages if isinstance(m, UserMessage)]


def test_the_ai_sdk_sends_files_and_sends_them_back_after_a_reload(served: Served) -> None:
    file_part = {
        "type": "file",
        "mediaType": "image/png",
        "filename": "error.png",
        "url": f"data:image/png;base64,{IMAGE_BASE64}",
    }
    plan = json.dumps({"chatId": "chat-files", "text": "What is this?", "files": [file_part]})
    result = node_clients.run_client(
        "aisdk_chat.mjs", plan, env={"BASE_URL": served.live.url, "PATH": "/usr/bin:/bin"}
    )
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    assert found["errors"] == []
    assert found["requests"][0]["messages"][0]["parts"][0] == file_part  # as the SDK sent it
    first = user_messages(served)[0]
    (kept,) = first.attachments
    assert (kept.name, kept.media_type, kept.size) == ("error.png", "image/png", len(IMAGE))
    assert served.provider.requests[0].files == {kept.sha256: IMAGE}
    # The reload shows the file at its URL here, which the client then sent back as is.
    shown = {
        "type": "file",
        "mediaType": "image/png",
        "filename": "error.png",
        "url": f"/api/attachments/{kept.id}",
    }
    assert found["loaded"][0]["parts"] == [
        shown,
        {"type": "text", "text": "What is this?", "state": "done"},
    ]
    assert found["requests"][-1]["messages"][-1]["parts"][0] == shown
    later = served.provider.requests[-1]
    assert [m.attachments for m in later.messages if isinstance(m, UserMessage)] == [
        (kept,),
        (kept,),
    ]
    assert [m["role"] for m in found["afterSecond"]] == ["user", "assistant"] * 2


def test_the_ai_sdk_may_not_point_the_server_at_other_addresses(served: Served) -> None:
    body = {
        "id": "chat-ssrf",
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "parts": [
                    {"type": "text", "text": "Look"},
                    {
                        "type": "file",
                        "mediaType": "image/png",
                        "url": "http://169.254.169.254/latest/meta-data",
                    },
                ],
            }
        ],
    }
    refused = served.http.post("/ai-sdk/chat", json=body)
    assert refused.status_code == 400
    assert refused.json()["field"] == "messages.0.parts.1.url"
    assert served.provider.requests == []


def test_ag_ui_image_content_reaches_the_model_and_stays_in_the_thread(served: Served) -> None:
    result = node_clients.run_client(
        "agui_client.mjs",
        "image",
        env={**os.environ, "BASE_URL": served.live.url, "IMAGE_BASE64": IMAGE_BASE64},
        timeout=PROCESS_START,
    )
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    assert found["types"].count("RUN_FINISHED") == 2
    first, later = served.provider.requests
    asked = first.messages[-1]
    assert isinstance(asked, UserMessage) and asked.content == "What does this error say?"
    (kept,) = asked.attachments
    assert (kept.name, kept.media_type) == ("error.png", "image/png")
    assert first.files == later.files == {kept.sha256: IMAGE}
    assert later.messages[0] == asked  # the next run's history keeps the image


def test_ag_ui_content_that_is_not_what_it_claims_is_refused(served: Served) -> None:
    body = {
        "threadId": "t-html",
        "runId": "r1",
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "messages": [
            {
                "id": "u1",
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {
                            "type": "data",
                            "value": base64.b64encode(samples.HTML).decode(),
                            "mimeType": "image/png",
                        },
                    }
                ],
            }
        ],
    }
    refused = served.http.post("/ag-ui", json=body)
    assert refused.status_code == 415
    assert served.provider.requests == []
