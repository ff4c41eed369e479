"""Every id we mint (sessions, turns, rewinds): a UUIDv7, so ids sort by the time they were made."""

from __future__ import annotations

import uuid_utils


def new_uuid7() -> str:
    return str(uuid_utils.uuid7())
