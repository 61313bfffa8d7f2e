"""Reading a request body as strict, bounded JSON.

Refused, each with an INVALID_INPUT issue that says why (never echoing the value): a body over
the size limit (read in chunks and stopped there, whatever Content-Length claims), another
content type, bytes that are not UTF-8, text that is not JSON, ``NaN``/``Infinity``, duplicate
object keys, nesting deeper than the limit (checked before parsing, so a hostile body cannot
exhaust the parser's stack) and lone surrogates (``"\\ud800"``, which no UTF-8 text can hold).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator
from typing import Any

from .._core.errors import AgentSurfaceError
from .._core.jsonvalue import find_lone_surrogate
from .._core.pointer import json_pointer
from .errors import Refusal, invalid_input


def too_large(limit: int) -> Refusal:
    """413 INVALID_INPUT for a body over ``limit`` bytes (declared or read)."""
    return Refusal(
        invalid_input(
            f"The request body is larger than {limit} bytes; send fewer or shorter values.",
            [("/", f"the body must be at most {limit} bytes")],
        ),
        status=413,
    )


async def read_limited(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    buffer = bytearray()
    async for chunk in chunks:
        buffer += chunk
        if len(buffer) > limit:
            raise too_large(limit)
    return bytes(buffer)


def check_content_type(value: str | None) -> None:
    media = (value or "").split(";")[0].strip().lower()
    if media != "application/json":
        raise Refusal(
            invalid_input(
                "Send the body as JSON (Content-Type: application/json).",
                [("/", "the content type must be application/json")],
            ),
            status=415,
        )


def nesting_depth(text: str, limit: int) -> int:
    """The deepest array/object nesting in JSON ``text``, counting only up to ``limit + 1``."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Malformed("a key appears twice in one object")  # which one is not repeated
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise _Malformed(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):  # 1e400 parses to infinity, which no JSON text can carry back
        raise _Malformed("a number is too large")
    return number


class _Malformed(AgentSurfaceError, ValueError):
    pass


def _bad(message: str, issue: str) -> Refusal:
    return Refusal(invalid_input(message, [("/", issue)]))


def parse_json(raw: bytes, *, max_depth: int) -> Any:
    """Strict JSON from ``raw`` or a Refusal (400 INVALID_INPUT) naming the problem."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("The request body is not UTF-8 text.", "the body is not valid UTF-8") from None
    if nesting_depth(text, max_depth) > max_depth:
        raise _bad(
            f"The request body is nested deeper than {max_depth} levels.",
            f"nesting deeper than {max_depth} levels",
        )
    try:
        value = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant, parse_float=_finite
        )
    except _Malformed as exc:
        raise _bad("The request body is not valid JSON.", str(exc)) from None
    except (ValueError, RecursionError):
        raise _bad("The request body is not valid JSON.", "the body is not valid JSON") from None
    if find_lone_surrogate(value) is not None:
        raise _bad(
            "The request body holds a string with a lone surrogate, which is not valid Unicode.",
            "a string holds a lone surrogate (invalid Unicode)",
        )
    return value

_SAFE_SEGMENT = re.compile(r"[A-Za-z0-9_$.-]{1,64}")


def safe_pointer(path: str) -> str:
    """``path`` cut before the first segment that is not a plain name or index: the answer never
    repeats a property name the caller made up (markup, control characters, megabytes)."""
    kept: list[str] = []
    for segment in path.split("/")[1:]:
        if not _SAFE_SEGMENT.fullmatch(segment):
            break
        kept.append(segment)
    return json_pointer(kept)
