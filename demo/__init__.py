"""The devices console demo.

- ``demo.app``: the console that runs in the page under Pyodide (its state, agent surface and UI).
- ``demo.app.contracts``: the procedure contracts, imported by the page and by the server.
- ``demo.backend`` / ``demo.procedures`` / ``demo.api`` / ``demo.db`` / ``demo.seed``: the real
  backend (Starlette on uvicorn, SQLite in WAL mode), built on the library's procedure server; it
  serves the page and is the authority for every domain operation.

``python -m demo`` (or ``python scripts/demo.py``) runs the demo. Importing this package imports
nothing else, so the browser-side ``demo.app`` never pulls in the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .backend import start_demo_server as start_demo_server

__all__ = ["start_demo_server"]


def __getattr__(name: str) -> object:
    if name == "start_demo_server":
        from .backend import start_demo_server

        return start_demo_server
    raise AttributeError(f"module 'demo' has no attribute {name!r}")
