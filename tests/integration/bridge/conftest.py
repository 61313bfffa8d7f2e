from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agentsurface.bridge import BackendBridge
from tests._shared.server.domain import make_server
from tests._shared.server.live import serving


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "app.sqlite3"


@pytest.fixture
def backend(db_path: Path) -> Iterator[str]:
    """The devices app on a real uvicorn at 127.0.0.1."""
    with serving(make_server(db_path)) as base:
        yield base


@pytest.fixture
async def bridge(backend: str) -> AsyncIterator[BackendBridge]:
    bridge = BackendBridge(backend, headers={"Authorization": "Bearer tok-alice"}, timeout=10)
    yield bridge
    await bridge.aclose()
