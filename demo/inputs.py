"""Strict reading of request bodies and query strings into typed inputs.

Unknown properties, wrong types, out-of-range values, malformed JSON (including duplicate keys and
non-finite numbers) are refused with INVALID_INPUT issues: a JSON pointer and a message, never the
offending value. Property names appear in pointers only when they look like identifiers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .db import STATUSES, DeviceFilter, Json, Status
from .errors import Issue, invalid_input

MAX_BODY_BYTES = 16 * 1024
MAX_DEVICE_IDS = 100
MAX_NAME = 80
MAX_REASON = 200
MAX_FILTER = 80
QUERY_LIMIT_DEFAULT, QUERY_LIMIT_MAX = 50, 200
LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX = 500, 500

DEVICE_ID = re.compile(r"dev-[0-9]{4,8}")
SAFE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")
FORBIDDEN_CHARS = re.compile("[\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]")  # controls, bidi overrides


def key_path(key: str) -> str:
    return f"/{key}" if SAFE_KEY.fullmatch(key) else "/"


class InputReader:
    """Reads one JSON object field by field, collecting agent-safe issues; :meth:`done` raises them.

    Optional fields may be absent or ``null``. Unknown properties are refused.
    """

    def __init__(self, value: Json, accepted: Sequence[str]) -> None:
        self.issues: list[Issue] = []
        self._object: dict[str, Json] | None = None
        if not isinstance(value, dict):
            self.issues.append(Issue("/", "must be a JSON object"))
            return
        self._object = value
        for key in value:
            if key not in accepted:
                named = "" if SAFE_KEY.fullmatch(key) else " (name not shown)"
                self.issues.append(
                    Issue(key_path(key), f"unexpected property{named}; accepted: {', '.join(accepted)}")
                )

    def _issue(self, key: str, message: str) -> None:
        self.issues.append(Issue(f"/{key}", message))

    def _get(self, key: str, required: bool) -> Json:
        if self._object is None:
            return None
        value = self._object.get(key)
        if value is None and required:
            self._issue(key, "is required")
        return value

    def text(self, key: str, *, max_len: int, required: bool = False, strip: bool = False) -> str | None:
        value = self._get(key, required)
        if value is None:
            return None
        if not isinstance(value, str):
            self._issue(key, "must be a string")
            return None
        if strip:
            value = value.strip()
        if required and not value:
            self._issue(key, "must not be empty")
            return None
        if len(value) > max_len:
            self._issue(key, f"must be at most {max_len} characters")
            return None
        if FORBIDDEN_CHARS.search(value):
            self._issue(key, "must not contain control or bidirectional-override characters")
            return None
        return value

    def status(self, key: str) -> Status | None:
        value = self._get(key, False)
        if value is None:
            return None
        for status in STATUSES:
            if value == status:
                return status
        self._issue(key, f"must be one of: {', '.join(STATUSES)}")
        return None

    def integer(self, key: str, *, minimum: int, maximum: int, default: int) -> int:
        value = self._get(key, False)
        if value is None:
            return default
        if type(value) is not int:  # bool is an int subclass: refuse it too
            self._issue(key, "must be an integer")
            return default
        if not minimum <= value <= maximum:
            self._issue(key, f"must be between {minimum} and {maximum}")
            return default
        return value

    def device_id(self, key: str) -> str:
        value = self._get(key, True)
        if value is None:
            return ""
        if not isinstance(value, str) or not DEVICE_ID.fullmatch(value):
            self._issue(key, "must be a device id like dev-0001")
            return ""
        return value

    def device_ids(self, key: str) -> list[str]:
        """A list of 1..MAX_DEVICE_IDS device ids; duplicates collapse (the operations are idempotent)."""
        value = self._get(key, True)
        if value is None:
            return []
        if not isinstance(value, list):
            self._issue(key, "must be an array of device ids")
            return []
        if not 1 <= len(value) <= MAX_DEVICE_IDS:
            self._issue(key, f"must hold between 1 and {MAX_DEVICE_IDS} device ids")
            return []
        ids: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not DEVICE_ID.fullmatch(item):
                self.issues.append(Issue(f"/{key}/{index}", "must be a device id like dev-0001"))
            else:
                ids.append(item)
        return list(dict.fromkeys(ids))

    def done(self) -> None:
        if self.issues:
            raise invalid_input(self.issues)


@dataclass(frozen=True, slots=True)
class QueryInput:
    where: DeviceFilter
    limit: int


@dataclass(frozen=True, slots=True)
class RenameInput:
    device_id: str
    name: str


@dataclass(frozen=True, slots=True)
class DisableInput:
    device_ids: list[str]
    reason: str | None


@dataclass(frozen=True, slots=True)
class EnableInput:
    device_ids: list[str]


def parse_query(body: Json, *, default_limit: int = QUERY_LIMIT_DEFAULT, max_limit: int = QUERY_LIMIT_MAX) -> QueryInput:
    reader = InputReader(body, ("status", "city", "text", "limit"))
    status = reader.status("status")
    city = reader.text("city", max_len=MAX_FILTER, strip=True) or None
    text = reader.text("text", max_len=MAX_FILTER, strip=True) or None
    limit = reader.integer("limit", minimum=1, maximum=max_limit, default=default_limit)
    reader.done()
    return QueryInput(DeviceFilter(status, city, text), limit)


def parse_rename(body: Json) -> RenameInput:
    reader = InputReader(body, ("deviceId", "name"))
    device_id = reader.device_id("deviceId")
    name = reader.text("name", max_len=MAX_NAME, required=True, strip=True)
    reader.done()
    return RenameInput(device_id, name or "")


def parse_disable(body: Json) -> DisableInput:
    reader = InputReader(body, ("deviceIds", "reason"))
    ids = reader.device_ids("deviceIds")
    reason = reader.text("reason", max_len=MAX_REASON, strip=True) or None
    reader.done()
    return DisableInput(ids, reason)


def parse_enable(body: Json) -> EnableInput:
    reader = InputReader(body, ("deviceIds",))
    ids = reader.device_ids("deviceIds")
    reader.done()
    return EnableInput(ids)


def parse_json_body(raw: bytes) -> Json:
    """Strict JSON: UTF-8 text that stays UTF-8 once parsed (no lone surrogates from ``\\ud800``
    escapes), no duplicate keys, only finite numbers, bounded nesting."""

    def no_duplicates(pairs: list[tuple[str, Json]]) -> dict[str, Json]:
        out: dict[str, Json] = {}
        for key, value in pairs:
            if key in out:
                raise _DuplicateKey(key)
            out[key] = value
        return out

    def no_constants(_name: str) -> Json:
        raise ValueError("non-finite number")

    def finite(text: str) -> float:
        number = float(text)
        if not math.isfinite(number):  # 1e400 parses to inf
            raise ValueError("non-finite number")
        return number

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_input([Issue("/", "the body is not valid UTF-8")]) from None
    if not text.strip():
        raise invalid_input([Issue("/", "a JSON object body is required")])
    try:
        value: Json = json.loads(
            text, object_pairs_hook=no_duplicates, parse_constant=no_constants, parse_float=finite
        )
    except _DuplicateKey as exc:
        raise invalid_input([Issue(key_path(exc.key), "duplicate property")]) from None
    except json.JSONDecodeError as exc:
        raise invalid_input([Issue("/", f"is not valid JSON (line {exc.lineno}, column {exc.colno})")]) from None
    except (ValueError, RecursionError):
        raise invalid_input([Issue("/", "is not acceptable JSON (non-finite number or nesting too deep)")]) from None
    if not _encodable(value):
        raise invalid_input([Issue("/", "a string holds an escaped lone surrogate (not valid Unicode text)")])
    return value


def _encodable(value: Json) -> bool:
    """Whether every string (keys included) encodes as UTF-8, so it can be stored and sent back."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return False
    return True


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__("duplicate key")
        self.key = key
