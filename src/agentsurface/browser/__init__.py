"""Everything that touches the browser (``js``/``pyodide``). Import only under Pyodide, except
``jsvalues`` (the null/undefined helpers), which also imports on CPython.

Loading this package connects the layers below it to the page: the WebMCP adapter's detection of
the browser's model context and the procedure bridge's ``fetch`` transport are injected here
(``_core.page_services``; the browser modules load on first use), so no import points up.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .._core import page_services

if TYPE_CHECKING:
    from ..adapters.model_context import ModelContext
    from ..bridge.transport import Transport

__all__ = ["detect_model_context", "live_proxy_count"]


def _detect() -> ModelContext | None:
    from .model_context import detect_model_context

    return detect_model_context()


def _pyfetch_transport() -> Transport:
    from .fetch import PyfetchTransport

    return PyfetchTransport()


if sys.platform == "emscripten":  # under CPython only jsvalues is importable: nothing to provide
    page_services.provide(detector=_detect, transport=_pyfetch_transport)


def __getattr__(name: str) -> Any:
    # Lazy, so ``agentsurface.browser.jsvalues`` can be imported where there is no ``js``.
    if name == "detect_model_context":
        from .model_context import detect_model_context

        return detect_model_context
    if name == "live_proxy_count":
        from .proxies import live_proxy_count

        return live_proxy_count
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
