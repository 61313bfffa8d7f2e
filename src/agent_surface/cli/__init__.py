"""The ``agent-surface`` command: ``inspect``, ``snapshot``, ``check`` and ``bundle``.

Exit codes: 0 the view is complete and nothing selected failed; 1 integrity failure or a selected
drift finding; 2 compiler, completeness, git, contract or bundle failure. CLI-only dependencies
(rich) come with the ``cli`` extra; nothing here is imported by the page.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
