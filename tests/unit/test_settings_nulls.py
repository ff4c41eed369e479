"""VS Code sends a setting left empty as null (its schema's default for shiro.sandbox, shiro.model,
...): that means "the default", not a bad value. Before issue 25 every start logged
"ignoring setting shiro.sandbox: Expected `str`, got `null`" three times."""

from __future__ import annotations

import logging

import pytest

from shiro_neko.config import Settings, merge_settings


def test_a_null_setting_means_its_default_and_warns_nothing(caplog: pytest.LogCaptureFixture) -> None:
    current = Settings(sandbox="read-only", model="m", compactThreshold=5000)
    with caplog.at_level(logging.WARNING):
        merged = merge_settings(current, {"sandbox": None, "model": None, "baseUrl": None,
                                          "shortTermMemory": {"depth": None}, "memory.enabled": None, "approvals": "auto-edit"})
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    assert merged.sandbox == Settings().sandbox and merged.model is None
    assert merged.shortTermMemory.depth == -1 and merged.memory.enabled
    assert merged.approvals == "auto-edit" and merged.compactThreshold == 5000  # the rest as sent / as it was


def test_a_bad_value_is_still_refused_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        merged = merge_settings(Settings(), {"sandbox": "nonsense", "maxSteps": 7})
    assert merged.sandbox == Settings().sandbox and merged.maxSteps == 7
    assert any("shiro.sandbox" in r.getMessage() for r in caplog.records)
