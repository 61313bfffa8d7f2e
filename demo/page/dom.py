"""A tiny DOM builder for the console (browser only). Strings always become text nodes:
nothing an agent or the server sends is ever parsed as HTML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import js
from pyodide.ffi import create_proxy

from agentsurface.browser.jsvalues import attribute, js_or_none
from agentsurface.browser.jsvalues import closest as closest  # re-exported for ui.py

document = js.document
_handlers: list[Any] = []  # proxies of long-lived listeners (freed with the page)


def h(tag: str, attrs: dict[str, Any] | None = None, *children: Any) -> Any:
    element = document.createElement(tag)
    for key, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        if key.startswith("on") and callable(value):
            listen(element, key[2:], value)
        elif key == "class":
            element.className = value
        elif key == "dataset":
            for name, item in value.items():
                element.setAttribute(f"data-{name}", str(item))
        elif value is True:
            element.setAttribute(key, "")
        else:
            element.setAttribute(key, str(value))
    append(element, *children)
    return element


def append(element: Any, *children: Any) -> Any:
    for child in children:
        if child is None or child is False:
            continue
        if isinstance(child, (list, tuple)):
            append(element, *child)
        elif isinstance(child, str | int | float):
            element.appendChild(document.createTextNode(str(child)))
        else:
            element.appendChild(child)
    return element


def listen(element: Any, event: str, handler: Callable[[Any], Any]) -> None:
    proxy = create_proxy(handler)
    _handlers.append(proxy)
    element.addEventListener(event, proxy)


def replace_children(element: Any, *children: Any) -> None:
    element.replaceChildren()
    append(element, *children)


def by_id(element_id: str) -> Any:
    """The element, or None (getElementById answers JS null, which ``is None`` never matches)."""
    return js_or_none(document.getElementById(element_id))



def data(element: Any, name: str) -> str | None:
    """``data-<name>`` of an element, or None when the element or the attribute is missing."""
    return attribute(element, f"data-{name}")
