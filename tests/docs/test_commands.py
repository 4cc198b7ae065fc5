"""The shell commands of the README, the first-agent page and the examples' READMEs run, as
written, against the code beside them.

Each page's ``sh`` blocks are read in order: ``agentstream serve`` starts a server (on a free
port instead of 8000, which every ``http://127.0.0.1:8000`` of the page is then pointed at), and
every other ``agentstream`` or ``curl`` command runs while it serves and must succeed. Pages
about an application of the reader's own (the README, the first-agent page) run in a scratch
directory holding that page's ``myapp.py``, with ``AGENTSTREAM_MODEL`` naming a script, as the
testing guide suggests, so that no key is needed; the examples' commands run from the
repository root. ``make`` lines are the test command and the server's own start, covered by
CI itself.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from contextlib import ExitStack
from pathlib import Path

import pytest

from ..server.helpers import serving

ROOT = Path(__file__).parents[2]
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", flags=re.S | re.M)
PY_BLOCK = re.compile(r"^```python\n(# (\w+\.py)\n.*?)^```", flags=re.S | re.M)

SCRIPT = """\
rules:
  - match: billing
    turns:
      - text: "Let me check."
        tool_calls: [{name: check_service, arguments: {service: billing}}]
      - text: "Billing answers slowly (840 ms)."
"""


def commands(page: Path) -> list[str]:
    """The page's shell commands in order, continuation lines joined, comments dropped."""
    found = []
    for block in SH_BLOCK.findall(page.read_text()):
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            pending += line + "\n"
            try:
                words = shlex.split(pending, comments=True)
            except ValueError:  # a quoted argument goes on over the next line
                continue
            pending = ""
            if not words or "make" in words:
                continue  # `make ...`, with or without variables set for it
            found.append(shlex.join(words))
    return found


PAGES = {
    "README.md": ROOT / "README.md",
    "docs/first-agent.md": ROOT / "docs" / "first-agent.md",
    **{
        f"examples/{d.name}/README.md": d / "README.md"
        for d in sorted((ROOT / "examples").iterdir())
        if (d / "README.md").is_file()
    },
}


def serve(command: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The page's ``agentstream serve`` command, on a port the system picks."""
    return subprocess.Popen(
        f"exec {command} --port 0", shell=True, cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


@pytest.mark.parametrize("name", PAGES)
def test_the_page_s_commands_run(name: str, tmp_path: Path) -> None:
    page = PAGES[name]
    own_app = not name.startswith("examples/")
    scratch = tmp_path / "work"
    scratch.mkdir()
    (scratch / ".venv").symlink_to(ROOT / ".venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env["AGENTSTREAM_DATA_DIR"] = str(tmp_path / "data")
    if own_app:
        for code, file_name in PY_BLOCK.findall(page.read_text()):
            (scratch / file_name).write_text(code)
        assert (scratch / "myapp.py").is_file(), f"{name} shows no myapp.py"
        (scratch / "script.yaml").write_text(SCRIPT)
        env["AGENTSTREAM_MODEL"] = "scripted:script.yaml"
    url = None
    ran = []
    with ExitStack() as stack:
        for command in commands(page):
            if " serve " in f" {command} ":
                process = serve(command, scratch if own_app else ROOT, env)
                url = stack.enter_context(serving(process))
                ran.append("serve")
                continue
            if url is not None:
                command = command.replace("http://127.0.0.1:8000", url)
            result = subprocess.run(
                command, shell=True, cwd=scratch, env=env, capture_output=True, text=True,
                timeout=60, check=False,
            )  # fmt: skip
            assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
            assert "Traceback" not in result.stdout + result.stderr, command
            if command.startswith("curl -N"):
                assert '"type":"' in result.stdout or "event:" in result.stdout, result.stdout
            ran.append(command.split()[0])
    assert "serve" in ran, f"{name} serves nothing"
