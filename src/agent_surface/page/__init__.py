"""The page API: components bound to DOM elements, availability that follows the app's state,
and a drop-in surface inspector. Runs in the page (Pyodide); the logic also runs on CPython
against any ``PageDom`` (tests use a fake)."""

from __future__ import annotations

from .dom import PageDom
from .lifecycle import INSTANCE_ATTRIBUTE, Attachment, PageSurface, attach, mount, page_surface
from .scheduling import Coalescer
from .state import State, notify_state_changed, on_state_change

__all__ = [
    "INSTANCE_ATTRIBUTE",
    "Attachment",
    "Coalescer",
    "PageDom",
    "PageSurface",
    "State",
    "attach",
    "mount",
    "notify_state_changed",
    "on_state_change",
    "page_surface",
]
