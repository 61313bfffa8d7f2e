"""The server tests' fixtures (both trees): each tree's server/conftest.py imports those its
tests use."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from agentsurface.server import ProcedureServer

from .domain import make_server
from .postgres import PostgresServer, running_postgres


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "app.sqlite3"


@pytest.fixture
def server(db_path: Path) -> ProcedureServer:
    return make_server(db_path)


@pytest.fixture
async def client(server: ProcedureServer) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as http:
        yield http


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session (each test makes its own database)."""
    with running_postgres() as server:
        yield server
