"""``/api/attachments`` through a real uvicorn with a SQLite store: uploads kept and read back
by their owner only, every kind of bad input refused with its status, and messages of every
spec protocol carrying uploads to the model and into the stored history."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.attachments import AttachmentLimits
from agentstream.messages import UserMessage
from agentstream.providers.profiles import ModelProfile, ModelProfiles
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.settings import Settings, SettingsError
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.attachments import samples
from tests.attachments.s3 import bucket_keys, new_bucket, s3_env
from tests.server.conftest import Serve
from tests.server.helpers import (
    LiveServer,
    bearer,
    datas,
    parse_sse,
    stream_text,
    token,
    wait_until,
)
from tests.store.conftest import fresh_postgres

ANN = bearer(token("ann", tenant="acme"))
BOB = bearer(token("bob", tenant="acme"))
ANN_ELSEWHERE = bearer(token("ann", tenant="globex"))


class Served:
    def __init__(self, live: LiveServer, provider: ScriptedProvider, data_dir: Path) -> None:
        self.live = live
        self.provider = provider
        self.data_dir = data_dir
        self.http = live.client()

    def upload(
        self,
        content: bytes,
        name: str = "shot.png",
        declared: str = "application/octet-stream",
        headers: dict[str, str] = ANN,
    ) -> httpx.Response:
        return self.http.post(
            "/api/attachments", files={"file": (name, content, declared)}, headers=headers
        )

    def uploaded(self, content: bytes, name: str = "shot.png", **kwargs: Any) -> dict[str, Any]:
        response = self.upload(content, name, **kwargs)
        assert response.status_code == 201, response.text
        answer: dict[str, Any] = response.json()
        return answer

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def last_user_message(self) -> UserMessage:
        message = self.provider.requests[-1].messages[-1]
        assert isinstance(message, UserMessage)
        return message


def start(
    serve: Serve,
    tmp_path: Path,
    profiles: ModelProfiles | None = None,
    *,
    auth: bool = True,
    unreferenced_after: timedelta = timedelta(hours=24),
    turns: Sequence[dict[str, Any]] = ({"text": "Seen."},),
    tools: Sequence[Any] = (),
) -> Served:
    """An agent with a scripted model (playing ``turns``) and ``tools``, served with a
    SQLite store and small limits (with ``auth``, tenants from the token's ``tenant``
    claim; without, anonymous local mode)."""
    provider = ScriptedProvider({"rules": [{"turns": list(turns)}]})
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'files.db'}"))
    agent = Agent(model=provider, tools=list(tools), profiles=profiles or ModelProfiles())
    live = serve(
        agent,
        store=store,
        auth=auth,
        **({"tenant_claim": "tenant"} if auth else {}),
        data_dir=tmp_path,
        attachments=AttachmentLimits(
            max_file_bytes=64 * 1024,
            max_files_per_message=2,
            unreferenced_after=unreferenced_after,
        ),
    )
    live.call(upgrade(store.engine), timeout=60)
    return Served(live, provider, tmp_path)


@pytest.fixture
def served(serve: Serve, tmp_path: Path) -> Iterator[Served]:
    started = start(serve, tmp_path)
    yield started
    started.http.close()


def test_an_upload_answers_what_was_kept_and_its_owner_reads_it_back(served: Served) -> None:
    image = samples.png(8, 8)
    answer = served.uploaded(image, "../../screenshot of the error.png")
    assert answer == {
        "id": answer["id"],
        "name": "screenshot of the error.png",
        "media_type": "image/png",
        "size": len(image),
        "sha256": hashlib.sha256(image).hexdigest(),
    }
    read = served.http.get(f"/api/attachments/{answer['id']}", headers=ANN)
    assert read.status_code == 200
    assert read.content == image
    assert read.headers["content-type"] == "image/png"
    assert read.headers["x-content-type-options"] == "nosniff"
    assert read.headers["content-disposition"].startswith("inline;")
    assert "sandbox" in read.headers["content-security-policy"]
    # The name was only shown: nothing was written outside the data directory's store.
    assert not (served.data_dir.parent / "screenshot of the error.png").exists()


def test_a_name_in_any_script_is_kept_and_served_with_an_ascii_fallback(served: Served) -> None:
    answer = served.uploaded(samples.png(), "季節 report.png")  # sent in raw UTF-8
    assert answer["name"] == "季節 report.png"
    read = served.http.get(f"/api/attachments/{answer['id']}", headers=ANN)
    assert read.headers["content-disposition"] == (
        "inline; filename=\"?? report.png\"; filename*=UTF-8''%E5%AD%A3%E7%AF%80%20report.png"
    )


@pytest.mark.parametrize(
    ("content", "name", "media_type"),
    [
        (samples.PDF, "paper.pdf", "application/pdf"),
        (samples.CSV, "cities.csv", "text/csv; charset=utf-8"),
    ],
)
def test_anything_but_a_raster_image_is_served_as_a_download(
    served: Served, content: bytes, name: str, media_type: str
) -> None:
    answer = served.uploaded(content, name)
    read = served.http.get(f"/api/attachments/{answer['id']}", headers=ANN)
    assert read.content == content
    assert read.headers["content-type"] == media_type
    assert read.headers["content-disposition"] == (
        f"attachment; filename=\"{name}\"; filename*=UTF-8''{name}"
    )
    assert read.headers["x-content-type-options"] == "nosniff"


def test_another_users_or_tenants_attachment_is_not_found(served: Served) -> None:
    answer = served.uploaded(samples.png())
    for stranger in (BOB, ANN_ELSEWHERE):
        read = served.http.get(f"/api/attachments/{answer['id']}", headers=stranger)
        assert (read.status_code, read.json()) == (404, {"detail": "Attachment not found"})
    unknown = served.http.get("/api/attachments/no-such-id", headers=ANN)
    assert unknown.status_code == 404
    assert served.http.get(f"/api/attachments/{answer['id']}").status_code == 401


def test_html_that_claims_to_be_a_png_is_refused(served: Served) -> None:
    for name, declared in (("cat.png", "image/png"), ("page.html", "image/png")):
        refused = served.upload(samples.HTML, name, declared)
        assert refused.status_code == 415, refused.text
    text_as_png = served.upload(b"hello", "upload", "image/png")
    assert text_as_png.status_code == 415
    assert "image/png" in text_as_png.json()["detail"]


def test_unsupported_content_is_415(served: Served) -> None:
    assert served.upload(samples.BINARY, "blob.bin").status_code == 415
    assert served.upload(samples.SVG, "logo.svg", "image/svg+xml").status_code == 415


def test_a_file_over_the_limit_is_413_naming_it_and_leaves_nothing(served: Served) -> None:
    big = b"a" * (64 * 1024 + 1)
    refused = served.upload(big, "big.txt")
    assert refused.status_code == 413
    assert refused.json() == {
        "detail": "the file is over the limit of 65536 bytes (max_attachment_bytes)",
        "limit": "max_attachment_bytes",
    }
    staging = served.data_dir / "attachments" / "staging"
    assert os.listdir(staging) == []


def test_a_file_over_the_limit_sent_without_a_length_is_refused_as_it_arrives(
    served: Served,
) -> None:
    boundary = "b0undary"

    def body() -> Iterator[bytes]:
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            'filename="endless.txt"\r\nContent-Type: text/plain\r\n\r\n'
        ).encode()
        for _ in range(200):  # 12.8 MiB if it were all read
            yield b"x" * 65536

    refused = served.http.post(
        "/api/attachments",
        content=body(),
        headers={**ANN, "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert refused.status_code == 413
    assert refused.json()["limit"] == "max_attachment_bytes"


def test_a_decompression_bomb_is_refused(served: Served) -> None:
    refused = served.upload(samples.png(100_000, 100_000), "bomb.png", "image/png")
    assert refused.status_code == 413
    assert refused.json()["limit"] == "image_pixels"


def test_a_body_that_is_not_a_form_with_a_file_is_400(served: Served) -> None:
    as_json = served.http.post("/api/attachments", json={"file": "x"}, headers=ANN)
    assert (as_json.status_code, as_json.json()["field"]) == (400, "file")
    as_value = served.http.post("/api/attachments", files={"file": (None, "text")}, headers=ANN)
    assert as_value.status_code == 400
    wrong_field = served.http.post(
        "/api/attachments", files={"upload": ("a.txt", b"text")}, headers=ANN
    )
    assert (wrong_field.status_code, wrong_field.json()["detail"]) == (400, "file: field required")


def test_the_openapi_document_describes_the_routes(served: Served) -> None:
    paths = served.http.get("/openapi.json").json()["paths"]
    upload = paths["/api/attachments"]["post"]
    schema = upload["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert schema["required"] == ["file"]
    assert {"201", "413", "415"} <= set(upload["responses"])
    assert "404" in paths["/api/attachments/{attachment_id}"]["get"]["responses"]


SPEC_REQUESTS = {
    "workflow": ("/v1/agent/chat", {"message": "What is this?", "context_type": "workflow"}),
    "tray": ("/api/chat/stream", {"message": "What is this?"}),
    "ops": ("/agent/stream", {"message": "What is this?"}),
    "playground": (
        "/api/chat/agent-chat/stream?brandRef=acme",
        {"brandRef": "acme", "model": "scripted:script", "content": "What is this?"},
    ),
}


@pytest.mark.parametrize("protocol", sorted(SPEC_REQUESTS))
def test_each_spec_protocol_carries_attachments_to_the_model_and_the_history(
    served: Served, protocol: str
) -> None:
    image = served.uploaded(samples.png())
    table = served.uploaded(samples.CSV, "cities.csv")
    path, body = SPEC_REQUESTS[protocol]
    response, text = stream_text(
        served.http, path, json={**body, "attachments": [image["id"], table["id"]]}, headers=ANN
    )
    assert response.status_code == 200
    if protocol == "ops":  # its final conversation object lists them too
        (update,) = [f for f in datas(parse_sse(text)) if f["type"] == "conversation"]
        asked, answered = update["conversation"]["conversation"]
        assert asked["attachments"] == [image, table] and "attachments" not in answered
    sent = served.last_user_message()
    assert sent.content == "What is this?"
    assert [(a.id, a.media_type) for a in sent.attachments] == [
        (image["id"], "image/png"),
        (table["id"], "text/csv"),
    ]
    assert served.provider.requests[-1].files == {
        image["sha256"]: samples.png(),
        table["sha256"]: samples.CSV,
    }
    (listed,) = served.http.get("/api/conversations", headers=ANN).json()["items"]
    detail = served.http.get(f"/api/conversations/{listed['id']}", headers=ANN).json()
    assert detail["messages"][0]["attachments"] == [image, table]


@pytest.mark.parametrize("protocol", sorted(SPEC_REQUESTS))
def test_someone_elses_attachment_in_a_message_is_404_and_nothing_is_stored(
    served: Served, protocol: str
) -> None:
    theirs = served.uploaded(samples.png(), headers=BOB)
    path, body = SPEC_REQUESTS[protocol]
    response = served.http.post(path, json={**body, "attachments": [theirs["id"]]}, headers=ANN)
    assert (response.status_code, response.json()) == (404, {"detail": "Attachment not found"})
    assert served.http.get("/api/conversations", headers=ANN).json()["items"] == []
    assert served.provider.requests == []


def test_a_message_over_its_file_count_is_413(served: Served) -> None:
    ids = [served.uploaded(samples.png(2, n + 1))["id"] for n in range(3)]
    path, body = SPEC_REQUESTS["ops"]
    response = served.http.post(path, json={**body, "attachments": ids}, headers=ANN)
    assert response.status_code == 413
    assert response.json()["limit"] == "max_attachments_per_message"


def test_a_message_may_be_only_files(served: Served) -> None:
    image = served.uploaded(samples.png())
    path, _ = SPEC_REQUESTS["ops"]
    response, _ = stream_text(
        served.http, path, json={"message": "", "attachments": [image["id"]]}, headers=ANN
    )
    assert response.status_code == 200
    assert served.last_user_message().attachments[0].id == image["id"]


def test_a_server_without_a_store_refuses_messages_naming_attachments(serve: Serve) -> None:
    live = serve(Agent(model=ScriptedProvider({"rules": [{"turns": [{"text": "Hi."}]}]})))
    with live.client() as http:
        not_served = http.post("/api/attachments", files={"file": ("a.txt", b"x")})
        assert not_served.status_code in (404, 405)
        path, body = SPEC_REQUESTS["ops"]
        refused = http.post(path, json={**body, "attachments": ["0193"]})
    assert (refused.status_code, refused.json()["field"]) == (400, "attachments")


def test_a_model_that_cannot_read_a_kind_is_refused_before_anything_is_stored(
    serve: Serve, tmp_path: Path
) -> None:
    text_only = ModelProfiles().with_profiles(
        {"scripted:*": ModelProfile(inputs=frozenset({"text"}))}
    )
    served = start(serve, tmp_path, text_only)
    with served.http:
        image = served.uploaded(samples.png())
        table = served.uploaded(samples.CSV, "cities.csv")
        path, body = SPEC_REQUESTS["tray"]
        refused = served.http.post(path, json={**body, "attachments": [image["id"]]}, headers=ANN)
        assert refused.status_code == 400
        assert refused.json() == {
            "detail": "attachments: the model scripted:script cannot read images; send them to "
            "a model that can, or leave them out",
            "field": "attachments",
        }
        assert served.http.get("/api/conversations", headers=ANN).json()["items"] == []
        # Text files reach every model.
        response, _ = stream_text(
            served.http, path, json={**body, "attachments": [table["id"]]}, headers=ANN
        )
        assert response.status_code == 200
    assert served.last_user_message().attachments[0].media_type == "text/csv"


def test_the_server_sweeps_away_uploads_no_message_took(serve: Serve, tmp_path: Path) -> None:
    served = start(serve, tmp_path, unreferenced_after=timedelta(seconds=1))
    with served.http:
        taken = served.uploaded(samples.png(3, 3))
        left = served.uploaded(samples.png(5, 5))
        path, body = SPEC_REQUESTS["ops"]
        response, _ = stream_text(
            served.http, path, json={**body, "attachments": [taken["id"]]}, headers=ANN
        )
        assert response.status_code == 200

        def status(attachment: dict[str, Any]) -> int:
            url = f"/api/attachments/{attachment['id']}"
            return served.http.get(url, headers=ANN).status_code

        assert wait_until(lambda: status(left) == 404, timeout=30)
        assert status(taken) == 200


def test_a_page_of_another_site_cannot_upload_in_a_visitors_name(
    serve: Serve, tmp_path: Path
) -> None:
    evil = {"Origin": "https://evil.example"}
    with start(serve, tmp_path / "signed-in") as signed_in:
        cookie = {"Cookie": f"agentstream_session={token('ann', tenant='acme')}"}
        refused = signed_in.upload(samples.png(), headers={**cookie, **evil})
        assert (refused.status_code, refused.json()["detail"]) == (
            403,
            "an upload from a page of another site needs a bearer token",
        )
        assert signed_in.upload(samples.png(), headers=cookie).status_code == 201
        assert signed_in.upload(samples.png(), headers={**ANN, **evil}).status_code == 201
    with start(serve, tmp_path / "anonymous", auth=False) as anonymous:
        assert anonymous.upload(samples.png(), headers=evil).status_code == 403
        dev_server = {"Origin": "http://localhost:5173"}
        assert anonymous.upload(samples.png(), headers=dev_server).status_code == 201
        own = {"Origin": anonymous.live.url}
        assert anonymous.upload(samples.png(), headers=own).status_code == 201


def test_an_attachment_whose_content_is_gone_is_404(served: Served) -> None:
    answer = served.uploaded(samples.png())
    sha = answer["sha256"]
    (served.data_dir / "attachments" / sha[:2] / sha).unlink()
    read = served.http.get(f"/api/attachments/{answer['id']}", headers=ANN)
    assert (read.status_code, read.json()) == (404, {"detail": "Attachment not found"})


def hosts_share_attachments(
    serve: Serve, tmp_path: Path, storage: str, image: bytes
) -> dict[str, Any]:
    """Two servers on one new PostgreSQL database, each with a data directory of its own,
    keeping content in ``storage``: an upload to the first is read, and named in a message,
    on the second, and no file of it is on the first's disk. Returns the upload."""
    with fresh_postgres() as url:
        hosts = []
        for name in ("a", "b"):
            provider = ScriptedProvider({"rules": [{"turns": [{"text": "Seen."}]}]})
            store = SqlConversationStore(create_engine(url))
            live = serve(
                Agent(model=provider),
                store=store,
                auth=True,
                tenant_claim="tenant",
                data_dir=tmp_path / name,
                attachment_storage=storage,
            )
            live.call(upgrade(store.engine), timeout=60)
            hosts.append(Served(live, provider, tmp_path / name))
        first, second = hosts
        try:
            answer = first.uploaded(image)
            read = second.http.get(f"/api/attachments/{answer['id']}", headers=ANN)
            assert read.content == image
            path, body = SPEC_REQUESTS["tray"]
            response, _ = stream_text(
                second.http, path, json={**body, "attachments": [answer["id"]]}, headers=ANN
            )
            assert response.status_code == 200
            assert second.provider.requests[-1].files == {answer["sha256"]: image}
            assert not (tmp_path / "a" / "attachments" / answer["sha256"][:2]).exists()
            return answer
        finally:
            for host in hosts:
                host.http.close()
                store = host.live.app.state.server.runner.store
                host.live.call(store.close(), timeout=30)


def test_servers_on_one_postgresql_database_share_attachments(serve: Serve, tmp_path: Path) -> None:
    """Content kept in the database."""
    hosts_share_attachments(serve, tmp_path, "database", samples.png(9, 9))


def test_servers_sharing_a_bucket_share_attachments(
    serve: Serve, tmp_path: Path, s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Content kept in an S3-compatible bucket, configured as a deployment does it (the
    storage's URL, the endpoint and keys in the standard variables)."""
    for name, value in s3_env(s3_url).items():
        monkeypatch.setenv(name, value)
    bucket = new_bucket(s3_url)
    answer = hosts_share_attachments(serve, tmp_path, f"s3://{bucket}/chat", samples.png(7, 7))
    sha = answer["sha256"]
    assert bucket_keys(s3_url, bucket) == [f"chat/{sha[:2]}/{sha}"]


def test_the_limits_and_the_storage_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "AGENTSTREAM_DATA_DIR": "/srv/chat",
            "AGENTSTREAM_ATTACHMENT_STORAGE": "database",
            "AGENTSTREAM_MAX_ATTACHMENT_BYTES": "1000",
            "AGENTSTREAM_MAX_ATTACHMENTS_PER_MESSAGE": "3",
            "AGENTSTREAM_MAX_ATTACHMENT_BYTES_PER_MESSAGE": "2500",
            "AGENTSTREAM_UNREFERENCED_ATTACHMENT_HOURS": "0.5",
        }
    )
    assert (settings.data_dir, settings.attachment_storage) == (Path("/srv/chat"), "database")
    assert settings.attachments == AttachmentLimits(
        max_file_bytes=1000,
        max_files_per_message=3,
        max_message_bytes=2500,
        unreferenced_after=timedelta(minutes=30),
    )
    assert Settings.from_env({}).attachments == AttachmentLimits()
    bucket = Settings.from_env({"AGENTSTREAM_ATTACHMENT_STORAGE": " S3://Files/chat "})
    assert bucket.attachment_storage == "S3://Files/chat"  # a bucket's name as written
    for wrong in ("s3", "s3://", "s3:///prefix", "disk"):
        with pytest.raises(SettingsError, match="files, database or s3://bucket/prefix"):
            Settings.from_env({"AGENTSTREAM_ATTACHMENT_STORAGE": wrong}).check()
    with pytest.raises(SettingsError, match="must be positive"):
        Settings.from_env({"AGENTSTREAM_MAX_ATTACHMENT_BYTES": "-1"}).check()


def test_an_upload_cut_short_leaves_nothing_behind(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    boundary = "cut"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        'filename="half.txt"\r\nContent-Type: text/plain\r\n\r\n'
    ).encode() + b"x" * 20_000
    request = (
        "POST /api/attachments HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{served.live.port}\r\n"
        f"Authorization: {ANN['Authorization']}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        "Content-Length: 60000\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", served.live.port)) as sock:
        sock.sendall(request + head)
        staging = served.data_dir / "attachments" / "staging"
        assert wait_until(lambda: staging.exists() and any(staging.iterdir()))
    assert wait_until(lambda: not any(staging.iterdir()))
    assert served.http.get("/api/conversations", headers=ANN).status_code == 200
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
