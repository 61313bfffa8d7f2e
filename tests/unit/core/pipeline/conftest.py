"""Every invocation result produced by this suite is checked against the error matrix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentsurface import AgentSurfaceRegistry

from .helpers import assert_matrix_compliant


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "author_details: the test expects author-provided PRECONDITION_FAILED details"
    )


@pytest.fixture(autouse=True)
def _matrix_checked_results(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Wrap ``AgentSurfaceRegistry.invoke`` so no result escapes the matrix check."""
    original = AgentSurfaceRegistry.invoke
    author = request.node.get_closest_marker("author_details") is not None

    async def checked(self: AgentSurfaceRegistry, *args: Any, **kwargs: Any) -> Any:
        result = await original(self, *args, **kwargs)
        assert_matrix_compliant(result, author_details=author)
        return result

    monkeypatch.setattr(AgentSurfaceRegistry, "invoke", checked)
    yield
