"""JSON values: the only payloads that cross the agent boundary.

Also canonical JSON (the text JavaScript's JSON.stringify gives, keys sorted) and SHA-256 digests, plus a
deep freeze that keeps values JSON-serializable (``FrozenDict`` is a dict, tuples are lists).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, NoReturn, TypeAlias

from .base_error import AgentSurfaceError
from .pointer import json_pointer

JsonValue: TypeAlias = (
    str | int | float | bool | list["JsonValue"] | tuple["JsonValue", ...] | dict[str, "JsonValue"] | None
)


class NotJsonError(AgentSurfaceError, TypeError):
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
        return json_pointer(self.parts)


def to_json_value(value: Any, *, max_depth: int = 64, _path: str = "$", _depth: int = 0) -> JsonValue:
    """Return a plain-JSON copy of ``value`` or raise NotJsonError naming where it fails.

    Accepts dicts with str keys, lists/tuples, str, bool, finite int/float, None.
    Cycles are caught by the depth cap.
    """
    if _depth == 0:
        copied = _plain_copy(value, max_depth, 0)
        if copied is not _NOT_PLAIN:
            return copied  # type: ignore[no-any-return]
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


_NOT_PLAIN: Any = object()
NOT_PLAIN: Any = _NOT_PLAIN  # what :func:`plain_copy` answers for a value it does not copy


def plain_copy(value: Any, max_depth: int = 64) -> Any:
    """A copy of ``value`` when it is built only of the exact JSON types (dict with str keys,
    list, tuple as list, str, bool, None, finite float, int within +-2**53), at most
    ``max_depth`` levels deep; else ``NOT_PLAIN`` (:func:`to_json_value` says what is wrong).
    Such a copy digests (:func:`digest`) and sizes (:func:`json_size`) without fail."""
    return _plain_copy(value, max_depth, 0)


def _plain_copy(value: Any, max_depth: int, depth: int) -> Any:
    """The copy :func:`to_json_value` makes, for values built only of the exact JSON types
    (most values: no paths to track, no ABC checks); ``_NOT_PLAIN`` sends anything else, and
    every failure, down the careful path that names where it is."""
    if depth > max_depth:
        return _NOT_PLAIN
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:  # beyond 2**53 JavaScript reads another number: the careful path digests it
        return value if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER else _NOT_PLAIN
    if kind is float:
        return value if math.isfinite(value) else _NOT_PLAIN
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return _NOT_PLAIN
            if type(item) is str and depth < max_depth:
                out[key] = item
                continue
            copied = _plain_copy(item, max_depth, depth + 1)
            if copied is _NOT_PLAIN:
                return _NOT_PLAIN
            out[key] = copied
        return out
    if kind is list or kind is tuple:
        items: list[Any] = []
        for item in value:
            if type(item) is str and depth < max_depth:
                items.append(item)
                continue
            copied = _plain_copy(item, max_depth, depth + 1)
            if copied is _NOT_PLAIN:
                return _NOT_PLAIN
            items.append(copied)
        return items
    return _NOT_PLAIN


def canonical_json(value: Any) -> str:
    """Deterministic JSON, the same text JavaScript's ``JSON.stringify`` gives for the value.

    Keys sorted by UTF-16 code unit, no whitespace, ``-0`` as ``0``, one form per number (ES
    ``Number::toString``: ``1e20`` and ``10**20`` are both ``100000000000000000000``, ``1e21``
    is ``1e+21``), and a lone surrogate escaped as ``\\udxxx``. An ``int`` beyond 2**53 is read
    as JavaScript reads it, the nearest double, so it digests like the number a browser would
    send. Non-finite numbers raise ``ValueError``; values that are not JSON raise ``TypeError``.
    """
    text = _encode_plain(value) if _encodes_alike(value, 0) else _written(value)
    # Surrogates survive string encoding untouched; no JSON punctuation is one, so fixing
    # them once over the whole text treats each string on its own. (``isascii`` reads a flag.)
    if text.isascii() or _SURROGATE_RE.search(text) is None:
        return text
    return _escape_lone_surrogates(text)


_encode_string = json.encoder.encode_basestring  # C-accelerated; ``ensure_ascii=False`` form
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_MAX_SAFE_INTEGER = 2**53


c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # None without json's C accelerator


def _not_json(value: Any) -> NoReturn:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def plain_encoder(*, sort_keys: bool = False, ensure_ascii: bool = False, allow_nan: bool = True) -> Callable[[Any], str]:
    """Compact JSON text of a value already known to be plain JSON (a ``to_json_value`` or
    ``plain_copy`` result, or one built of plain parts): acyclic, so the C encoder is built
    once, without the cycle check (``JSONEncoder.encode`` builds one, and its check, per call)."""
    if c_make_encoder is None:  # no C accelerator: the standard encoder
        return json.JSONEncoder(
            sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=ensure_ascii, allow_nan=allow_nan
        ).encode
    strings = encode_basestring_ascii if ensure_ascii else encode_basestring
    chunks = c_make_encoder(None, _not_json, strings, None, ":", ",", sort_keys, False, allow_nan)
    return lambda value: "".join(chunks(value, 0))


# The C encoder writes what _write writes for most values (see _encodes_alike), many times faster.
_encode_plain = plain_encoder(sort_keys=True, allow_nan=False)
_MAX_PLAIN_DEPTH = 64
_encode_compact = plain_encoder()


def _encodes_alike(value: Any, depth: int) -> bool:
    """Whether ``json`` writes ``value`` exactly as :func:`_written` does: str, bool and null;
    safe integers; floats that both write positionally (non-integral, 1e-4 <= |x| < 1e16: the
    same shortest digits, ``repr`` and ES agree on the layout); dicts with ASCII keys (code
    point and UTF-16 order agree); lists and tuples of those. Anything else, by hand."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER)
    if kind is float:
        return 1e-4 <= abs(value) < 1e16 and not value.is_integer()
    if depth >= _MAX_PLAIN_DEPTH:
        return False  # hostile nesting or a cycle: _write meets it as it always has
    # Strings are most leaves: tested inline, they cost no call.
    if kind is dict or kind is FrozenDict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii():
                return False
            if type(item) is not str and not _encodes_alike(item, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        return all(type(item) is str or _encodes_alike(item, depth + 1) for item in value)
    return False


def _written(value: Any) -> str:
    parts: list[str] = []
    _write(value, parts)
    return "".join(parts)


def _escape_lone_surrogates(text: str) -> str:
    # Pair what pairs (a JavaScript string is UTF-16 code units), escape what stays alone.
    paired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", paired)


def _write(value: Any, parts: list[str]) -> None:
    if isinstance(value, str):
        parts.append(_encode_string(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(str(value) if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER else _int_as_js(value))
    elif isinstance(value, float):
        parts.append(es_number(value))
    elif isinstance(value, Mapping):
        keys = sorted(value)
        if not all(isinstance(k, str) for k in keys):
            raise TypeError(f"object keys must be strings, got {keys!r}")
        if not all(k.isascii() for k in keys):
            keys.sort(key=_utf16_units)  # code point order differs above U+FFFF
        parts.append("{")
        for i, key in enumerate(keys):
            if i:
                parts.append(",")
            parts.append(_encode_string(key))
            parts.append(":")
            _write(value[key], parts)
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def _utf16_units(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _int_as_js(value: int) -> str:
    try:
        return es_number(float(value))
    except OverflowError:
        raise ValueError(f"integer with {len(str(abs(value)))} digits is beyond any JSON number") from None


def es_number(value: float) -> str:
    """ECMAScript ``Number::toString`` of a finite float (what ``JSON.stringify`` writes)."""
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value!r} is not JSON")
    if value == 0:
        return "0"  # -0 too
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that round-trip, as ES does; only the layout differs.
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    significant = all_digits.lstrip("0")
    # n: where the decimal point sits relative to the significant digits (ES's "n").
    n = len(whole) + int(exponent or 0) - (len(all_digits) - len(significant))
    digits = significant.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = f"0.{'0' * -n}{digits}"
    else:
        e = n - 1
        head = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def find_lone_surrogate(value: Any, parts: tuple[str | int, ...] = ()) -> tuple[tuple[str | int, ...], str, str] | None:
    """Where the first lone surrogate of a JSON value is (no UTF-8 text can hold one): a string's
    path, or for a member name its object's (so the pointer stays valid text), the character,
    and what holds it ("a string" / "a member name"); None when there is none."""
    if isinstance(value, str):
        char = _first_lone_surrogate(value)
        return None if char is None else (parts, char, "a string")
    items: Any = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        char = _first_lone_surrogate(key) if isinstance(key, str) else None
        if char is not None:
            return parts, char, "a member name"
        found = find_lone_surrogate(item, (*parts, key))
        if found is not None:
            return found
    return None


def _first_lone_surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return "sha256:" + sha256_hex(canonical_json(value))


# What one scalar can take as compact JSON: a character of a string at most 6 bytes (an escape
# such as \u001f; UTF-8 needs at most 4), a number at most 24 characters (a safe integer 17,
# a float's repr 24; a larger integer is not bounded), true, false or null at most 5.
_CHAR_MOST = 6
_NUMBER_MOST = 24
_SHALLOW_MOST = 16  # members of a dict, or items of one of its lists, that a bound looks at


def shallow_json_bound(value: Any) -> int:
    """An upper bound of :func:`json_size` of a plain ``value`` that is a dict of at most 16
    members, each a scalar or a list of at most 16 scalars (most call inputs and outputs),
    worked out without encoding it; -1 for any other value (size it with :func:`json_size`)."""
    if type(value) is not dict or len(value) > _SHALLOW_MOST:
        return -1
    bound = 2  # the braces
    for key, item in value.items():
        bound += _CHAR_MOST * len(key) + 4  # quotes, colon, comma
        kind = type(item)
        if kind is str:
            bound += _CHAR_MOST * len(item) + 2
        elif kind is float or kind is bool or item is None or (kind is int and _safe(item)):
            bound += _NUMBER_MOST
        elif kind is list and len(item) <= _SHALLOW_MOST:
            bound += 2
            for element in item:
                kind = type(element)
                if kind is str:
                    bound += _CHAR_MOST * len(element) + 3
                elif kind is float or kind is bool or element is None or (kind is int and _safe(element)):
                    bound += _NUMBER_MOST + 1
                else:
                    return -1
        else:
            return -1
    return bound


def _safe(number: int) -> bool:
    """A safe integer's digits fit the bound; a larger one (to_json_value keeps it) need not."""
    return -_MAX_SAFE_INTEGER <= number <= _MAX_SAFE_INTEGER


def json_size_at_most(value: Any, limit: int) -> bool:
    """Whether :func:`json_size` of a plain ``value`` is at most ``limit``; a small shallow
    value is answered from its bound, without encoding it."""
    bound = shallow_json_bound(value)
    return (0 <= bound <= limit) or json_size(value) <= limit


def json_size(value: Any) -> int:
    """Size in bytes of the compact JSON encoding of a plain JSON value (UTF-8; a lone
    surrogate counts as its escape)."""
    text = _encode_compact(value)
    if text.isascii():
        return len(text)
    if _SURROGATE_RE.search(text) is not None:
        text = _escape_lone_surrogates(text)
    return len(text.encode("utf-8"))


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
    # Exact types first (most of a schema or a manifest): an abstract Mapping check costs an
    # ABC lookup per value, and strings, most leaves, are kept without a call.
    kind = type(value)
    if kind is dict:
        return FrozenDict({k: v if type(v) is str else freeze(v) for k, v in value.items()})
    if kind is list or kind is tuple:
        return tuple([v if type(v) is str else freeze(v) for v in value])
    if kind is str or kind is int or kind is float or kind is bool or value is None or kind is FrozenDict:
        return value
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def frozen_copy(value: Any) -> Any:
    """``freeze(thaw(value))`` in one pass: FrozenDicts are copied too, so nothing mutable of
    ``value`` is shared (a FrozenDict built by hand may hold a list)."""
    kind = type(value)
    if kind is dict or kind is FrozenDict:
        return FrozenDict({k: v if type(v) is str else frozen_copy(v) for k, v in value.items()})
    if kind is list or kind is tuple:
        return tuple([v if type(v) is str else frozen_copy(v) for v in value])
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: frozen_copy(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen_copy(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A mutable deep copy of a JSON value (dicts and lists)."""
    kind = type(value)
    if kind is dict or kind is FrozenDict:
        return {k: v if type(v) is str else thaw(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) is str else thaw(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
