"""``agentstream db upgrade`` / ``current`` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentstream.cli import main
from agentstream.store import head_revision


def test_upgrade_then_current_on_a_new_sqlite_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'nested' / 'cli.db'}"
    assert main(["db", "current", "--database-url", url]) == 0
    assert "at revision none" in capsys.readouterr().out

    assert main(["db", "upgrade", "--database-url", url]) == 0
    assert f"at revision {head_revision()}" in capsys.readouterr().out
    assert (tmp_path / "nested" / "cli.db").exists()

    assert main(["db", "upgrade", "--database-url", url]) == 0  # idempotent
    assert main(["db", "current", "--database-url", url]) == 0
    out = capsys.readouterr().out
    assert f"at revision {head_revision()}, newest {head_revision()} (up to date)" in out


def test_default_url_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AGENTSTREAM_DATABASE_URL", raising=False)
    monkeypatch.setenv("AGENTSTREAM_DATA_DIR", str(tmp_path / "state"))
    assert main(["db", "upgrade"]) == 0
    assert (tmp_path / "state" / "agentstream.db").exists()
    capsys.readouterr()


def test_postgres_upgrade_is_idempotent(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "upgrade", "--database-url", postgres_url]) == 0
    assert main(["db", "current", "--database-url", postgres_url]) == 0
    assert "(up to date)" in capsys.readouterr().out


def test_unreachable_database_is_a_clear_error_without_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = "postgresql+asyncpg://postgres:s3cret-pw@127.0.0.1:1/nowhere"
    assert main(["db", "upgrade", "--database-url", url]) == 1
    captured = capsys.readouterr()
    assert "cannot use postgresql+asyncpg://postgres:***@127.0.0.1:1/nowhere" in captured.err
    assert "s3cret-pw" not in captured.err + captured.out
