"""The console's value types and names shared by the page and the server, without pydantic.

The page imports this module on its way to its first tool; the server's pydantic contracts
(``contracts.py``, ``session.py``) import it too, so both sides spell these the same way.
"""

from __future__ import annotations

from typing import Literal

Status = Literal["online", "offline", "disabled"]

# The app's own read at start (``session.py``): the page calls it by id; it is not on the
# agent's surface.
SESSION_DESCRIBE = "domain:session.describe"
# The devices listing: on the agent's surface, and the page's other read at start.
DEVICES_QUERY = "domain:devices.query"

__all__ = ["DEVICES_QUERY", "SESSION_DESCRIBE", "Status"]
