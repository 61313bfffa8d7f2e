"""The FastAPI tests' fixtures (tests/_shared/fastapi/fixtures.py)."""

from __future__ import annotations

from tests._shared.fastapi.fixtures import ledger  # noqa: F401
