"""The official JS protocol clients (``tests/js``: AG-UI's ``@ag-ui/client``, the AI SDK's
``ai``), run in Node by the tests that hold our servers to them.

``scripts/setup.sh --test`` installs them (``make test`` runs it); without them every such test
fails with one message saying so, rather than Node's module-resolution error.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["JS_DIR", "run_client"]

JS_DIR = Path(__file__).parent / "js"
PACKAGES = ("@ag-ui/client", "ai")
NODE = shutil.which("node") or "/usr/bin/node"


def run_client(
    script: str, *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``tests/js/<script>`` in Node with ``args``."""
    modules = JS_DIR / "node_modules"
    missing = [name for name in PACKAGES if not (modules / name / "package.json").is_file()]
    if missing:
        pytest.fail(
            f"the JS protocol clients are not installed ({', '.join(missing)} missing from "
            f"{modules}): run scripts/setup.sh --test (make test does)",
            pytrace=False,
        )
    return subprocess.run(
        [NODE, str(JS_DIR / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
