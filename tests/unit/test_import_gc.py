"""server/startup/import_gc.py: no full collection while import phases run, thresholds back after the
last one, what was made by then frozen; phases on two threads."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from shiro_neko.startup import import_gc


@pytest.fixture(autouse=True)
def restore_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()


def test_a_phase_blocks_full_collections_and_the_thresholds_come_back() -> None:
    gc.set_threshold(700, 10, 10)
    with import_gc.paused():
        young, middle, full = gc.get_threshold()
        assert (young, middle) == (700, 10)
        assert full >= 1 << 30
    assert gc.get_threshold() == (700, 10, 10)


def test_no_full_collection_runs_inside_a_phase() -> None:
    full_passes: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full_passes.append(1)

    # Little long-lived left in the collector's view (the rest frozen) and low thresholds: full
    # passes come within a few thousand kept objects, as the control shows.
    gc.freeze()
    gc.collect()
    gc.set_threshold(10, 1, 1)
    gc.callbacks.append(count)
    try:
        control = [[i] for i in range(5000)]
        assert full_passes, "control: full collections should run here"
        full_passes.clear()
        with import_gc.paused():
            kept = [[i] for i in range(5000)]
            assert not full_passes
        assert len(control) == len(kept)
    finally:
        gc.callbacks.remove(count)


def test_what_the_imports_made_is_frozen_at_the_end() -> None:
    gc.unfreeze()
    with import_gc.paused():
        kept = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == 0
    assert gc.get_freeze_count() >= len(kept)


def test_nested_and_threaded_phases_end_with_the_last() -> None:
    gc.set_threshold(700, 10, 10)
    started, finish = threading.Event(), threading.Event()

    def preload() -> None:
        import_gc.hold()
        started.set()
        finish.wait(10)
        import_gc.release()

    thread = threading.Thread(target=preload)
    thread.start()
    assert started.wait(10)
    with import_gc.paused():
        with import_gc.paused():
            pass
        assert gc.get_threshold()[2] >= 1 << 30
    assert gc.get_threshold()[2] >= 1 << 30, "the preload thread's phase still runs"
    finish.set()
    thread.join(10)
    assert gc.get_threshold() == (700, 10, 10)


def test_an_unmatched_release_changes_nothing() -> None:
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    import_gc.release()
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0
