"""JSON values: the only payloads that cross the agent boundary.

Also canonical JSON (sorted keys, -0 normalized, no whitespace) and SHA-256 digests, plus a
deep freeze that keeps values JSON-serializable (``FrozenDict`` is a dict, tuples are lists).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any, NoReturn, TypeAlias

JsonValue: TypeAlias = (
    str | int | float | bool | list["JsonValue"] | tuple["JsonValue", ...] | dict[str, "JsonValue"] | None
)


class NotJsonError(TypeError):
    """A value that is not a JsonValue (with the path of the offending part).

    ``path`` is for humans (``$.a[0]``); ``pointer`` is the exact JSON pointer (``/a/0``),
    built from the real keys, so keys containing '.' or '[' stay unambiguous.
    """

    def __init__(self, path: str, reason: str, parts: tuple[str | int, ...] = ()) -> None:
        super().__init__(f"{path or '$'}: {reason}")
        self.path = path or "$"
        self.reason = reason
        self.parts = parts

    @property
    def pointer(self) -> str:
        return "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in self.parts) or "/"


def to_json_value(value: Any, *, max_depth: int = 64, _path: str = "$", _depth: int = 0) -> JsonValue:
    """Return a plain-JSON copy of ``value`` or raise NotJsonError naming where it fails.

    Accepts dicts with str keys, lists/tuples, str, bool, finite int/float, None.
    Cycles are caught by the depth cap.
    """
    if _depth > max_depth:
        raise NotJsonError(_path, f"nested deeper than {max_depth} levels")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJsonError(_path, "non-finite number")
        return value
    if isinstance(value, Mapping):
        out: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NotJsonError(_path, f"object key {key!r} is not a string")
            try:
                out[key] = to_json_value(item, max_depth=max_depth, _path=f"{_path}.{key}", _depth=_depth + 1)
            except NotJsonError as exc:
                exc.parts = (key, *exc.parts)  # pointer parts are collected only on failure
                raise
        return out
    if isinstance(value, (list, tuple)):
        items: list[JsonValue] = []
        for i, item in enumerate(value):
            try:
                items.append(to_json_value(item, max_depth=max_depth, _path=f"{_path}[{i}]", _depth=_depth + 1))
            except NotJsonError as exc:
                exc.parts = (i, *exc.parts)
                raise
        return items
    raise NotJsonError(_path, f"{type(value).__name__} is not a JSON value")


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, compact, ``-0`` → ``0``, integral floats as ints."""
    return json.dumps(
        _normalize(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _normalize(value: Any) -> Any:
    if isinstance(value, float):
        if value == 0:
            return 0
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        return value
    if isinstance(value, Mapping):
        return {k: _normalize(v) for k, v in value.items() if v is not _OMIT}
    if isinstance(value, (list, tuple)):
        return [_normalize(v) for v in value]
    return value


class _Omit:
    """Marker for 'undefined' values that canonical JSON drops."""


_OMIT = _Omit()


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return "sha256:" + sha256_hex(canonical_json(value))


def json_size(value: Any) -> int:
    """Size in bytes of the compact JSON encoding (UTF-8)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


class FrozenDict(dict[str, Any]):
    """A dict that refuses mutation; still serializes as a plain JSON object."""

    __slots__ = ()

    def _immutable(self, *_: Any, **__: Any) -> NoReturn:
        raise TypeError("snapshot values are immutable")

    __setitem__ = _immutable
    __delitem__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable
    __ior__ = _immutable

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(canonical_json(self))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self


def freeze(value: Any) -> Any:
    """Deep-freeze JSON: dicts become FrozenDict, lists become tuples."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A mutable deep copy of a JSON value (dicts and lists)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
