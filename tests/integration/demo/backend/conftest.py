"""Fixtures for the backend suite: a fresh, seeded, in-memory demo server per test, and a client
that sends forged requests straight to it (no browser, no agent surface in between)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from demo.server.backend import DemoServer, start_demo_server

from agentsurface.server import RateLimit

from .helpers import FIXED_NOW, Client


@pytest.fixture
def server() -> Iterator[DemoServer]:
    srv, _ = start_demo_server(port=0, rate_limit=RateLimit(burst=10_000, per_second=1_000.0), clock=lambda: FIXED_NOW)
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def client(server: DemoServer) -> Client:
    return Client(server)
