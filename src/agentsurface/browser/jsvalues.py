"""The JS boundary's "no value": JS ``undefined`` arrives in Python as ``None``, but JS ``null``
arrives as ``pyodide.ffi.jsnull``, a truthy-looking proxy that ``is None`` never matches. Every
DOM lookup, optional JS argument and awaited JS result goes through these helpers instead of a
bare ``is None``.

Also the two DOM reads page code needs on every event, null-safe: ``attribute(element, name)``
and ``closest(event, selector)``.

Importable on CPython too (no ``js`` module): there, no JS value can exist, so only ``None`` is
nullish.
"""

from __future__ import annotations

from typing import Any

__all__ = ["attribute", "closest", "is_nullish", "js_get", "js_or_none"]

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

def attribute(element: Any, name: str) -> str | None:
    """``element.getAttribute(name)`` as a string, or None when the element or the attribute is
    missing."""
    if is_nullish(element):
        return None
    value = js_or_none(element.getAttribute(name))
    return None if value is None else str(value)


def closest(event: Any, selector: str) -> Any:
    """The element matching ``selector`` that ``event`` happened in, or None: events land on text
    nodes (no ``closest``), padding and gaps as often as on the elements a handler wants."""
    target = js_get(event, "target")
    if target is None or js_get(target, "closest") is None:
        return None
    return js_or_none(target.closest(selector))
