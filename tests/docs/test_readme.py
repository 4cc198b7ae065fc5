"""The README's snippets work verbatim: ``myapp.py`` imports, serves and chats, and the
offline test script prints the scripted answer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def python_blocks() -> dict[str, str]:
    """README code blocks that start with ``# <file name>``, by file name."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    named = {}
    for block in blocks:
        first = block.splitlines()[0]
        if first.startswith("# ") and first.endswith(".py"):
            named[first[2:]] = block
    return named


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_readme_snippets_run_verbatim(tmp_path: Path) -> None:
    blocks = python_blocks()
    assert set(blocks) >= {"myapp.py", "test_myapp.py"}
    for name, code in blocks.items():
        (tmp_path / name).write_text(code)

    offline = run("test_myapp.py", cwd=tmp_path)
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout.strip() == "Let me check.\n\nBilling is slow: 840 ms."

    loaded = run(
        "-c",
        "from agentstream.cli.loading import load_agent, load_hooks\n"
        "agent = load_agent('myapp:agent'); hooks = load_hooks('myapp:chat')\n"
        "print(sorted(t.name for t in agent.toolset.resolve(())), hooks.config.identity)",
        cwd=tmp_path,
    )
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == (
        "['alert_admin', 'check_service', 'propose_restart'] You help the on-call engineer."
    )


FIRST_AGENT = README.parent / "docs" / "first-agent.md"


def test_the_first_agent_page_builds_the_readme_s_app() -> None:
    """A reader who copied the README's ``myapp.py`` and goes on with the first-agent page
    has the app that page describes."""
    page_blocks = re.findall(r"```python\n(# myapp\.py\n.*?)```", FIRST_AGENT.read_text(), re.S)
    assert page_blocks == [python_blocks()["myapp.py"]]


def test_the_first_agent_page_s_snippets_run_against_the_readme_s_app(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(python_blocks()["myapp.py"])
    blocks = re.findall(r"```python\n(.*?)```", FIRST_AGENT.read_text(), flags=re.S)
    snippets = [b for b in blocks if not b.startswith("# myapp.py\n")]
    assert len(snippets) >= 2  # the stream and the approval
    for number, code in enumerate(snippets, start=1):
        (tmp_path / f"snippet{number}.py").write_text(code)
        ran = run(f"snippet{number}.py", cwd=tmp_path)
        assert ran.returncode == 0, f"snippet {number}:\n{ran.stderr}"
