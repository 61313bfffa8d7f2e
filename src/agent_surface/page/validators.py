"""Validators a page can load ahead of the agent's first call that needs them."""

from __future__ import annotations

from .._compat import import_jsonschema


def preload_validators() -> None:
    """Import jsonschema (raw JSON Schemas are validated by it, ~0.7 s to import in the page) now,
    for example once the page is idle, rather than during the agent's first call that needs it."""
    import_jsonschema()
