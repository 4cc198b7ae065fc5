"""A real S3-compatible server for the tests: moto's, on a loopback port of this process,
speaking S3's HTTP API to the same client a deployment uses."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
from moto.server import ThreadedMotoServer

from agentstream.attachments.object_store import ObjectBlobs

__all__ = ["CREDENTIALS", "bucket_keys", "new_bucket", "object_blobs", "s3_env", "s3_server"]

CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}


@contextmanager
def s3_server() -> Iterator[str]:
    """The URL of a new S3-compatible server, stopped afterwards."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def new_bucket(url: str) -> str:
    """A new, empty bucket of the server at ``url``."""
    name = f"files-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1", **CREDENTIALS)
    client.create_bucket(Bucket=name)
    return name


def bucket_keys(url: str, bucket: str) -> list[str]:
    """The keys of the objects in ``bucket``."""
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1", **CREDENTIALS)
    listed = client.list_objects_v2(Bucket=bucket)
    return sorted(entry["Key"] for entry in listed.get("Contents", []))


def s3_env(url: str) -> dict[str, str]:
    """The standard variables a deployment sets for an S3-compatible endpoint."""
    return {
        "AWS_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }


def object_blobs(url: str, bucket: str, prefix: str = "attachments") -> ObjectBlobs:
    from obstore.store import S3Store

    store = S3Store(
        bucket,
        prefix=prefix,
        endpoint=url,
        access_key_id=CREDENTIALS["aws_access_key_id"],
        secret_access_key=CREDENTIALS["aws_secret_access_key"],
        region="us-east-1",
        client_options={"allow_http": True},
    )
    return ObjectBlobs(store)
