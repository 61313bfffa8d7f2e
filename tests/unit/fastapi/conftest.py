"""The FastAPI tests' fixtures (tests/_shared/fastapi/fixtures.py)."""

from __future__ import annotations

from tests._shared.fastapi.fixtures import http, ledger, store  # noqa: F401
