"""Fixtures for the WebMCP adapter tests: a fresh app per test and adapters that always stop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agent_surface.adapters.model_context import Shape
from agent_surface.adapters.webmcp import WebMcpAdapter, create_webmcp_adapter

from .fakes import FakeModelContext, make_context
from .surface import CONSUMER, App, make_app

Start = Callable[..., Any]


@pytest.fixture
def app() -> App:
    return make_app()


@pytest.fixture
async def adapters() -> AsyncIterator[list[WebMcpAdapter]]:
    """Adapters created by a test; each is stopped at teardown (stop is idempotent)."""
    made: list[WebMcpAdapter] = []
    yield made
    for adapter in made:
        await adapter.stop()


@pytest.fixture
def start(app: App, adapters: list[WebMcpAdapter]) -> Start:
    """``await start(shape, **adapter_options)`` → (adapter, fake), started on ``app``."""

    async def go(shape: Shape | FakeModelContext, **options: Any) -> tuple[WebMcpAdapter, FakeModelContext]:
        fake = make_context(shape) if isinstance(shape, str) else shape
        adapter = create_webmcp_adapter(model_context=fake, **options)
        adapters.append(adapter)
        await adapter.start(registry=app.registry, consumer=CONSUMER)
        await adapter.settled()
        return adapter, fake

    return go
