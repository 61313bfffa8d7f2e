"""The JS boundary's "no value": JS ``undefined`` arrives in Python as ``None``, but JS ``null``
arrives as ``pyodide.ffi.jsnull``, a truthy-looking proxy that ``is None`` never matches. Every
DOM lookup, optional JS argument and awaited JS result goes through these helpers instead of a
bare ``is None``.

Importable on CPython too (no ``js`` module): there, no JS value can exist, so only ``None`` is
nullish.
"""

from __future__ import annotations

from typing import Any

try:
    from pyodide.ffi import jsnull as _jsnull
except ImportError:  # CPython: nothing can be JS null
    _jsnull = None


def is_nullish(value: object) -> bool:
    """True for ``None`` (Python None or JS undefined) and JS ``null``."""
    return value is None or (_jsnull is not None and value is _jsnull)


def js_or_none(value: Any) -> Any:
    """``value``, or ``None`` when it is JS null/undefined (e.g. ``getElementById`` found nothing)."""
    return None if is_nullish(value) else value


def js_get(obj: Any, name: str) -> Any:
    """``obj[name]`` or ``None``: missing, undefined and null properties (and a nullish ``obj``)
    all read as ``None``, and a getter that throws reads as missing."""
    if is_nullish(obj):
        return None
    try:
        return js_or_none(getattr(obj, name, None))
    except Exception:
        return None
