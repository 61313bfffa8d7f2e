"""The page API: components bound to DOM elements, availability that follows the app's state,
and a drop-in surface inspector. Runs in the page (Pyodide); the logic also runs on CPython
against any ``PageDom`` (tests use a fake)."""

from __future__ import annotations

from .dialog import ConfirmationDialog
from .dom import PageDom
from .inspector import CallEntry, SurfaceInspector, ToolRow
from .lifecycle import INSTANCE_ATTRIBUTE, Attachment, PageSurface, page_surface
from .scheduling import Coalescer
from .state import State, notify_state_changed, on_state_change
from .validators import dependencies_ready, preload_validators

__all__ = [
    "INSTANCE_ATTRIBUTE",
    "Attachment",
    "CallEntry",
    "Coalescer",
    "ConfirmationDialog",
    "PageDom",
    "PageSurface",
    "State",
    "SurfaceInspector",
    "ToolRow",
    "dependencies_ready",
    "notify_state_changed",
    "on_state_change",
    "page_surface",
    "preload_validators",
]
