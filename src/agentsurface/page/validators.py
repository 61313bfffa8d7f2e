"""Validators a page can load ahead of the agent's first call that needs them."""

from __future__ import annotations

import sys

from .._compat import import_jsonschema


async def dependencies_ready() -> None:
    """Wait until ``agentsurface.js`` has loaded the packages it defers past the first tool
    (pydantic, jsonschema, the app's ``data-packages``): at once when nothing is pending, and
    outside a page. Preload what your own code needs after this, not before the first tool."""
    if sys.platform != "emscripten":
        return
    from ..browser.packages import dependencies_ready as loaded

    await loaded()


def preload_validators() -> None:
    """Import jsonschema (raw JSON Schemas are validated by it, ~0.7 s to import in the page) now,
    for example once the page is idle, rather than during the agent's first call that needs it."""
    import_jsonschema()
