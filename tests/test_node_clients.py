"""Without the JS protocol clients installed, their tests fail with one message saying how to
install them, not Node's ``ERR_MODULE_NOT_FOUND``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import node_clients


def test_missing_clients_are_one_clear_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(node_clients, "JS_DIR", tmp_path)
    with pytest.raises(pytest.fail.Exception) as failed:
        node_clients.run_client("agui_client.mjs", env={})
    message = str(failed.value)
    assert "the JS protocol clients are not installed (@ag-ui/client, ai missing" in message
    assert "run scripts/setup.sh --test (make test does)" in message


def test_installed_clients_run() -> None:
    # The real scripts against no server: Node starts and loads the packages.
    result = node_clients.run_client(
        "agui_client.mjs",
        "nothing",
        env={"BASE_URL": "http://127.0.0.1:9", "PATH": "/usr/bin:/bin"},
    )
    assert "ERR_MODULE_NOT_FOUND" not in result.stderr
