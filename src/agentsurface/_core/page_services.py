"""What the page layer provides to the layers below it, set by ``agentsurface.browser`` when it
loads: finding the browser's model context (the WebMCP adapter) and the in-page HTTP transport
(the procedure bridge). Injected here, at the bottom, so no import points up and loading the
browser layer imports nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

model_context_detector: Callable[[], Any] | None = None
"""Returns the browser's model context (``adapters.model_context.ModelContext``) or ``None``."""

page_transport: Callable[[], Any] | None = None
"""Returns a new ``bridge.transport.Transport`` for the page (the browser's ``fetch``)."""


def provide(*, detector: Callable[[], Any], transport: Callable[[], Any]) -> None:
    global model_context_detector, page_transport
    model_context_detector, page_transport = detector, transport
