"""The ``format`` checks raw JSON Schemas are validated with (date-time, date, uuid, email, uri)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime

# RFC 3339 shapes. The stdlib parsers alone are too lenient (they take ISO week dates, hour-only
# times, missing offsets, and UUIDs with hyphens anywhere), so the shape is checked first.
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")
_UUID_RE = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATETIME_RE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value[:19])  # the calendar/clock ranges (month 13, hour 25...)
    except ValueError:
        return False
    return True


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_RE.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_uuid(value: object) -> bool:
    return not isinstance(value, str) or bool(_UUID_RE.fullmatch(value))


_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URI_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*")

FORMAT_CHECKS: dict[str, Callable[[object], bool]] = {
    "date-time": _is_datetime,
    "date": _is_date,
    "uuid": _is_uuid,
    "email": lambda v: not isinstance(v, str) or bool(_EMAIL_RE.fullmatch(v)),
    "uri": lambda v: not isinstance(v, str) or bool(_URI_RE.fullmatch(v)),
}
