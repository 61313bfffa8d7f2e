"""Conversions between JS values and JSON-safe Python values."""

from __future__ import annotations

import json
from typing import Any

import js
from pyodide.ffi import JsProxy, to_js

from .jsvalues import is_nullish, js_get


def to_js_object(value: Any) -> Any:
    """A Python dict/list tree as plain JS objects and arrays."""
    return to_js(value, dict_converter=js.Object.fromEntries)


def js_to_json(value: Any) -> Any:
    """A JS value as plain JSON-safe Python (through JSON, so no proxy leaks into Python)."""
    if is_nullish(value):
        return None
    if isinstance(value, JsProxy):
        text = js.JSON.stringify(value)
        return None if is_nullish(text) else json.loads(text)
    return value


def error_kind(exc: BaseException) -> tuple[str, str]:
    """(name, message) of a JS exception (e.g. ('InvalidStateError', '...'))."""
    js_error = js_get(exc, "js_error")
    name = js_get(js_error, "name") or type(exc).__name__
    message = js_get(js_error, "message") or str(exc)
    return str(name), str(message)
