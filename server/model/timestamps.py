"""The one form every timestamp we write takes: ISO 8601 UTC with milliseconds and `Z` (the form
the TypeScript original wrote; docs/state-files.md), and its reading back."""

from __future__ import annotations

from datetime import datetime, timezone


def iso_utc(when: datetime | float | None = None) -> str:
    """`when` (a datetime, or seconds since the epoch; default now) as `2025-01-31T12:00:00.000Z`."""
    if when is None:
        moment = datetime.now(timezone.utc)
    elif isinstance(when, datetime):
        moment = when.astimezone(timezone.utc)
    else:
        moment = datetime.fromtimestamp(when, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_to_epoch(text: str) -> float:
    """Seconds since the epoch for an ISO 8601 time; a time without an offset is taken as UTC."""
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()
