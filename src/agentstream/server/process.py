"""Settings of a whole server process, applied by ``agentstream serve`` once its app is built.

Python's cyclic garbage collector is tuned for short scripts: it collects the young generation
every 700 net allocations and, every hundred of those, walks every object the process holds.
A server with a thousand open streams allocates a few objects per delta and holds hundreds of
thousands of long-lived ones (modules, the app, each stream's tasks and buffers), so the
default thresholds stop the event loop for a full walk every few seconds and for a young one
every few hundred deltas: added gaps of hundreds of milliseconds at 1,000 streams
(``bench/stream_overhead.py``). :func:`tune_gc` moves what start-up allocated out of the
collector's sight for good (``gc.freeze``) and collects less often; reference counting still
frees almost everything at once, the collector only finds cycles.
"""

from __future__ import annotations

import gc

__all__ = ["GC_THRESHOLDS", "tune_gc"]

GC_THRESHOLDS = (50_000, 20, 100)
"""Young-generation allocations between collections, then how many young collections per
middle one and middle ones per full walk (Python's defaults: 700, 10, 10)."""


def tune_gc() -> None:
    """Freeze what exists now (call it once the app is built) and raise the thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
