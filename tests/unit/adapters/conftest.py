"""Fixtures for the WebMCP adapter tests: a fresh app per test and adapters that always stop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agentsurface.adapters.model_context import Shape
from agentsurface.adapters.webmcp import WebMCPAdapter

from .fakes import FakeModelContext, make_context
from .surface import CONSUMER, App, make_app

Start = Callable[..., Any]


@pytest.fixture
def app() -> App:
    return make_app()


@pytest.fixture
async def adapters() -> AsyncIterator[list[WebMCPAdapter]]:
    """Adapters created by a test; each is stopped at teardown (stop is idempotent)."""
    made: list[WebMCPAdapter] = []
    yield made
    for adapter in made:
        await adapter.aclose()


@pytest.fixture
def start(app: App, adapters: list[WebMCPAdapter]) -> Start:
    """``await start(shape, **adapter_options)`` → (adapter, fake), started on ``app``."""

    async def go(shape: Shape | FakeModelContext, **options: Any) -> tuple[WebMCPAdapter, FakeModelContext]:
        fake = make_context(shape) if isinstance(shape, str) else shape
        adapter = WebMCPAdapter(model_context=fake, **options)
        adapters.append(adapter)
        await adapter.start(registry=app.registry, consumer=CONSUMER)
        await adapter.settled()
        return adapter, fake

    return go
