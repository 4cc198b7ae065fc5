"""Every Python block of the docs site runs, as written.

A page's blocks run in order, each as a script in one scratch directory for the page; a block
whose first line is ``# <name>.py`` is also saved under that name first, so later blocks (and
the page's shell examples) can import it. Blocks check their own claims with ``assert``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


def pages_with_code() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if BLOCK.search(p.read_text()))


@pytest.mark.parametrize("page", pages_with_code(), ids=lambda p: str(p.relative_to(DOCS)))
def test_the_page_s_code_runs(page: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env |= {"PYTHONPATH": str(tmp_path), "AGENTSTREAM_DATA_DIR": str(tmp_path / "data")}
    for number, code in enumerate(BLOCK.findall(page.read_text()), start=1):
        first = code.splitlines()[0]
        name = (
            first[2:] if first.startswith("# ") and first.endswith(".py") else f"block{number}.py"
        )
        (tmp_path / name).write_text(code)
        ran = subprocess.run(
            [sys.executable, name],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert ran.returncode == 0, f"{page.name} block {number} ({name}):\n{ran.stderr}"
