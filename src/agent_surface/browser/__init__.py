"""Everything that touches the browser (``js``/``pyodide``). Import only under Pyodide, except
``jsvalues`` (the null/undefined helpers), which also imports on CPython."""

from __future__ import annotations

from typing import Any

__all__ = ["detect_model_context", "live_proxy_count"]


def __getattr__(name: str) -> Any:
    # Lazy, so ``agent_surface.browser.jsvalues`` can be imported where there is no ``js``.
    if name == "detect_model_context":
        from .model_context import detect_model_context

        return detect_model_context
    if name == "live_proxy_count":
        from .proxies import live_proxy_count

        return live_proxy_count
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
