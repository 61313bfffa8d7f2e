"""The FastAPI tests' fixtures (both trees): each tree's fastapi/conftest.py imports those its
tests use."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentsurface.server import open_store

from .routes_app import Ledger, make_app


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    opened = open_store(f"sqlite:///{tmp_path}/agent.sqlite3")
    yield opened
    opened.close()  # type: ignore[attr-defined]


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
async def http(store: Any, ledger: Ledger) -> AsyncIterator[httpx.AsyncClient]:
    app = make_app(store, ledger)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app") as client:
        yield client
