"""The listing route's query string (``GET /api/devices?status=&city=&q=&limit=``), read into the
same filters ``devices.query`` takes and validated by the same kind of strict model.

Empty values mean "no filter"; ``q`` is the free-text filter; a parameter given twice, an unknown
one or a malformed value is refused with INVALID_INPUT issues (a pointer and a message, never the
value). Parameter names appear in pointers only when they look like identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl

from pydantic import Field

from agent_surface import Invalid, schema_from_type
from agent_surface.server import Refusal, invalid_input

from .app.contracts import QueryInput

LIST_LIMIT_DEFAULT = LIST_LIMIT_MAX = 500
SAFE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")


class ListingQuery(QueryInput):
    limit: int = Field(LIST_LIMIT_DEFAULT, ge=1, le=LIST_LIMIT_MAX)


LISTING = schema_from_type(ListingQuery)


def key_path(key: str) -> str:
    return f"/{key}" if SAFE_KEY.fullmatch(key) else "/"


def safe_pointer(path: str) -> str:
    """``path`` cut before the first segment that is neither an identifier nor an index."""
    kept: list[str] = []
    for segment in path.split("/")[1:]:
        if not (SAFE_KEY.fullmatch(segment) or segment.isdigit()):
            break
        kept.append(segment)
    return "/" + "/".join(kept)


def listing_params(query: str) -> dict[str, object]:
    """The query string as the filter object (for validation and the audit), or a Refusal."""
    params: dict[str, object] = {}
    issues: list[tuple[str, str]] = []
    for key, value in parse_qsl(query, keep_blank_values=True):
        name = "text" if key == "q" else key
        if name in params:
            issues.append((key_path(key), "must be given once"))
        elif value != "":
            params[name] = int(value) if name == "limit" and value.isascii() and value.isdigit() else value
    if issues:
        raise Refusal(invalid_input("The query string is invalid; see details.issues.", issues))
    return params


def parse_listing(params: Mapping[str, object]) -> ListingQuery:
    result = LISTING.validate(dict(params))  # type: ignore[arg-type]
    if isinstance(result, Invalid):
        listed = [(safe_pointer(i.path), i.message) for i in result.issues]
        raise Refusal(invalid_input("The query string is invalid; see details.issues.", listed))
    value = result.value
    assert isinstance(value, ListingQuery)
    return value
