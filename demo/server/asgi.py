"""The demo as an ASGI app factory for several worker processes (``python -m demo --workers 4``).

Each worker calls :func:`create`, which opens its own connection pool to the database named by
``AGENTSURFACE_DEMO_DATABASE`` (already seeded by the parent process) and builds the app. What
the workers share lives in that database: invocation records, rate-limit budgets, the audit.
"""

from __future__ import annotations

import os

from agentsurface.server import RateLimit

from .api import DEFAULT_RATE_LIMIT
from .backend import ROOT, ApiHeaders, create_app
from .db import open_store

DATABASE_ENV = "AGENTSURFACE_DEMO_DATABASE"
RATE_LIMIT_ENV = "AGENTSURFACE_DEMO_RATE_LIMIT"


def parse_rate_limit(text: str) -> RateLimit:
    """``"60/1.0"``: a burst of 60 calls, refilled at 1 per second."""
    burst, _, rate = text.partition("/")
    try:
        return RateLimit(burst=int(burst), per_second=float(rate))
    except ValueError as exc:
        raise ValueError(f"a rate limit is BURST/PER_SECOND, like 60/1.0 (got {text!r})") from exc


def create() -> ApiHeaders:
    database = os.environ[DATABASE_ENV]
    limit = os.environ.get(RATE_LIMIT_ENV)
    store = open_store(database)
    return create_app(store, ROOT, rate_limit=parse_rate_limit(limit) if limit else DEFAULT_RATE_LIMIT)
