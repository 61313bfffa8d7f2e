from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from agent_surface.server import ProcedureServer

from .domain import make_server


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
