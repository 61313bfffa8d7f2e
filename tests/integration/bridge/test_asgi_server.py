"""The plugin's ``asgi_server`` fixture (issue 43.3): a page's server, not only its files, for a
page test: an ASGI app on a free port with its lifespan run, stopped after the test."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from agentsurface.bridge import MANIFEST_PATH, BackendBridge
from agentsurface.testing.asgi import AsgiServer
from tests._shared.server.domain import RENAME, make_server


def test_asgi_server_serves_the_procedure_server_beside_the_pages_files(
    asgi_server: Callable[..., str], db_path: Path
) -> None:
    lifespan: list[str] = []

    @contextlib.asynccontextmanager
    async def life(_app: Starlette) -> AsyncIterator[None]:
        lifespan.append("startup")
        yield
        lifespan.append("shutdown")

    app = Starlette(
        routes=[
            Mount("/api/agent", make_server(db_path)),
            Route("/index.html", lambda _request: PlainTextResponse("the page")),
        ],
        lifespan=life,
    )
    base = asgi_server(app)
    assert base.startswith("http://127.0.0.1:")
    assert httpx.get(base + "/index.html").text == "the page"
    manifest = httpx.get(base + "/api/agent" + MANIFEST_PATH).json()
    assert RENAME.id in manifest["procedures"]
    assert lifespan == ["startup"]


async def test_a_bridge_calls_through_it(asgi_server: Callable[..., str], db_path: Path) -> None:
    base = asgi_server(make_server(db_path))
    bridge = BackendBridge(base, headers={"Authorization": "Bearer tok-alice"})
    try:
        output = await bridge.call(RENAME.id, {"deviceId": "acme-1", "name": "Pump"})
    finally:
        await bridge.aclose()
    assert output == {"id": "acme-1", "name": "Pump"}


def test_the_server_stops_when_closed(db_path: Path) -> None:
    server = AsgiServer(make_server(db_path))
    httpx.get(server.url + MANIFEST_PATH).raise_for_status()
    server.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + MANIFEST_PATH, timeout=2)
