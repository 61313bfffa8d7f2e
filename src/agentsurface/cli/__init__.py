"""The ``agentsurface`` command: ``inspect``, ``snapshot``, ``check``, ``approve`` and ``bundle``.

Exit codes: 0 the view is complete and nothing selected failed; 1 integrity failure, a selected
drift finding, or an installed distribution contributing capabilities the app has not approved
(or approved with another digest); 2 compiler, completeness, configuration (a malformed
approval included), git, contract or bundle failure. CLI-only dependencies
(rich) come with the ``cli`` extra; nothing here is imported by the page.
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
