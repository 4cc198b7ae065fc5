"""Metrics of several worker processes, summed: the official client's multiprocess mode, as
``agentstream serve --workers N`` manages it.

Each worker writes its values to files of its own in a directory named by
``PROMETHEUS_MULTIPROC_DIR``, which must be set before the worker imports the client and must
start empty (values left by an earlier server would be summed in). :func:`shared_metrics`
makes a private directory for one server, names it to the workers it starts, marks the
live gauges of a worker that died as dead (so its runs and streams stop counting, while its
counters, which are totals since the server started, still do) and removes the directory
when the server stops. It imports nothing of ``prometheus_client`` until a worker has died.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator

__all__ = ["MULTIPROC_DIR", "REAP_SECONDS", "dead_workers", "shared_metrics"]

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""The official client's variable: where each process of a server writes its values."""
REAP_SECONDS = 1.0
"""How often the supervisor looks for workers that died."""

_PID = re.compile(r"_(\d+)\.db$")


@contextlib.contextmanager
def shared_metrics() -> Iterator[str]:
    """A private, empty metrics directory named in ``PROMETHEUS_MULTIPROC_DIR`` for the
    workers started inside the block, with dead workers marked as they die; removed after."""
    directory = tempfile.mkdtemp(prefix="agentstream-metrics-")
    previous = os.environ.get(MULTIPROC_DIR)
    os.environ[MULTIPROC_DIR] = directory
    stop = threading.Event()
    reaper = threading.Thread(
        target=_reap, args=(directory, stop), name="agentstream-metrics-reaper", daemon=True
    )
    reaper.start()
    try:
        yield directory
    finally:
        stop.set()
        reaper.join()
        shutil.rmtree(directory, ignore_errors=True)
        if previous is None:
            os.environ.pop(MULTIPROC_DIR, None)
        else:
            os.environ[MULTIPROC_DIR] = previous


def dead_workers(directory: str) -> set[int]:
    """The processes with files in ``directory`` that no longer run."""
    pids = {int(m.group(1)) for name in os.listdir(directory) if (m := _PID.search(name))}
    return {pid for pid in pids if pid != os.getpid() and not _alive(pid)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap(directory: str, stop: threading.Event) -> None:
    marked: set[int] = set()
    while not stop.wait(REAP_SECONDS):
        try:
            dead = dead_workers(directory) - marked
        except OSError:
            continue
        if not dead:
            continue
        from prometheus_client import multiprocess

        for pid in dead:
            multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
            marked.add(pid)
