"""The pytest plugin (entry point ``pytest11``): fixtures for an application's own tests.

- ``test_surface_factory(**options)`` → a TestSurface, disposed after the test;
- ``surface_snapshot(surface, name)`` compares the semantic snapshot with
  ``__surface_snapshots__/<test module>/<name>.json`` beside the test, writing it when missing
  or when pytest runs with ``--update-surface-snapshots``;
- ``webmcp_agent`` → a :class:`~agent_surface.testing.WebMCPAgent` on pytest-playwright's
  ``page`` (Playwright stays optional: the fixture says what to install when it is missing).

pytest imports every installed plugin at start-up, so this module stays import-light.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-surface-snapshots",
        action="store_true",
        default=False,
        help="agent-surface: rewrite stored semantic surface snapshots",
    )


@pytest.fixture
def test_surface_factory() -> Iterator[Callable[..., Any]]:
    from .harness import create_test_surface

    made: list[Any] = []

    def factory(**options: Any) -> Any:
        surface = create_test_surface(**options)
        made.append(surface)
        return surface

    yield factory
    for surface in made:
        surface.close()


@pytest.fixture
def surface_snapshot(request: pytest.FixtureRequest) -> Callable[..., None]:
    from .matchers import render_semantic_snapshot

    update = bool(request.config.getoption("--update-surface-snapshots"))
    module = Path(str(request.node.path))
    folder = module.parent / "__surface_snapshots__" / module.stem

    def check(surface: Any, name: str = "surface", *, include_version: bool = False) -> None:
        text = render_semantic_snapshot(surface, include_version=include_version)
        path = folder / f"{name}.json"
        if update or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        stored = path.read_text(encoding="utf-8")
        if stored != text:
            raise AssertionError(
                f"the agent surface changed; review it and rerun with --update-surface-snapshots\n"
                f"stored: {path}\n--- stored\n{stored}\n--- now\n{text}"
            )

    return check


@pytest.fixture
def webmcp_agent(request: pytest.FixtureRequest) -> Any:
    """The agent's side of pytest-playwright's ``page``: list and call its WebMCP tools, wait
    for tools, approve or deny its confirmation dialog with real clicks."""
    from .webmcp_agent import WebMCPAgent

    try:
        page = request.getfixturevalue("page")
    except pytest.FixtureLookupError:
        pytest.fail(
            "webmcp_agent drives pytest-playwright's `page` fixture, which is not available: "
            "pip install pytest-playwright (Chromium 146+ with --enable-features=WebMCPTesting, "
            "or a page that loads @mcp-b/webmcp-polyfill)",
            pytrace=False,
        )
    return WebMCPAgent(page)
