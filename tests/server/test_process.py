"""What ``agentstream serve`` sets for its whole process."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from agentstream.server.process import GC_THRESHOLDS, tune_gc


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_gc")
def test_tune_gc_freezes_start_up_objects_and_collects_less_often() -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    tune_gc()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == GC_THRESHOLDS
    assert GC_THRESHOLDS[0] > 700
