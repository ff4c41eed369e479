"""No full garbage collections while the server imports; then the imported objects are frozen
out of the collector's reach.

Why: importing pygls/lsprotocol (~1,000 attrs classes), openai (~650 pydantic models) and our
modules makes a hundred thousand long-lived container objects, so the collector runs full passes
over all of them during the imports, which find next to nothing: ~0.14 s of ~1.9 s of import CPU
on this machine (gc.callbacks; docs/performance.md). The young generations keep running (they are
what frees the cyclic garbage the imports make: turning the collector off altogether saves as much
again but keeps ~10 MB of garbage for the server's whole life). When the last import phase ends,
`gc.freeze()` moves what the imports made to the permanent generation, so the full passes that
later turns trigger never walk those objects again, and the thresholds are put back.

Import phases nest and may run on two threads (the SDK preload, server/__main__.py): the
thresholds come back when the last one ends. Stdlib only: imported before anything heavy.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_NEVER = 1 << 30  # a third threshold no count of young collections reaches
_lock = threading.Lock()
_phases = 0
_thresholds: tuple[int, int, int] = gc.get_threshold()


def hold() -> None:
    """An import phase starts: no full collection until the last phase ends."""
    global _phases, _thresholds
    with _lock:
        if _phases == 0:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], _NEVER)
        _phases += 1


def release() -> None:
    """An import phase ended: after the last one, freeze what was imported and resume."""
    global _phases
    with _lock:
        if _phases == 0:  # unmatched (a phase that was never held): nothing to undo
            return
        _phases -= 1
        if _phases == 0:
            gc.freeze()
            gc.set_threshold(*_thresholds)


@contextmanager
def paused() -> Iterator[None]:
    """Imports inside this block make no full collection (see the module's docstring)."""
    hold()
    try:
        yield
    finally:
        release()
