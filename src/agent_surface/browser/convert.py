"""Conversions between JS values and JSON-safe Python values."""

from __future__ import annotations

import json
from typing import Any

import js
from pyodide.ffi import JsProxy, to_js


def to_js_object(value: Any) -> Any:
    """A Python dict/list tree as plain JS objects and arrays."""
    return to_js(value, dict_converter=js.Object.fromEntries)


def js_to_json(value: Any) -> Any:
    """A JS value as plain JSON-safe Python (through JSON, so no proxy leaks into Python)."""
    if isinstance(value, JsProxy):
        text = js.JSON.stringify(value)
        return None if text is None else json.loads(text)
    return value


def error_kind(exc: BaseException) -> tuple[str, str]:
    """(name, message) of a JS exception (e.g. ('InvalidStateError', '...'))."""
    js_error = getattr(exc, "js_error", None)
    name = getattr(js_error, "name", None) or type(exc).__name__
    message = getattr(js_error, "message", None) or str(exc)
    return str(name), str(message)
