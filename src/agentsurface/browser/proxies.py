"""JS proxy lifetime. Proxies made with ``create_proxy`` are never freed on their own: every one
the library makes goes through here, is destroyed when its tool goes, and is counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyodide.ffi import create_proxy

_live = 0


def make_proxy(fn: Callable[..., Any]) -> Any:
    global _live
    proxy = create_proxy(fn)
    _live += 1
    return proxy


def destroy(proxy: Any) -> None:
    global _live
    if proxy is None:
        return
    try:
        proxy.destroy()
    except Exception:  # already destroyed
        return
    _live -= 1


def live_proxy_count() -> int:
    """How many proxies the library created and has not destroyed yet (leak checks)."""
    return _live
