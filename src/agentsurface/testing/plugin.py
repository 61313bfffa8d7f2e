"""The pytest plugin (entry point ``pytest11``): fixtures for an application's own tests.

- ``test_surface_factory(**options)`` → a TestSurface, disposed after the test;
- ``surface_snapshot(surface, name)`` compares the semantic snapshot with
  ``__surface_snapshots__/<test module>/<name>.json`` beside the test, writing it when missing
  or when pytest runs with ``--update-surface-snapshots``;
- ``webmcp_agent`` → a :class:`~agentsurface.testing.WebMCPAgent` on pytest-playwright's
  ``page`` (Playwright stays optional: the fixture says what to install when it is missing);
- ``static_server(folder="site")`` → the base URL of ``folder`` (relative to pytest's rootdir)
  served on a free 127.0.0.1 port, stopped after the test: an ``agentsurface bundle`` output or
  any folder of static files.
- ``asgi_server(app)`` → the base URL of an ASGI app (your Starlette or FastAPI app: the
  procedure server beside the bundled page's files) served by uvicorn on a free 127.0.0.1 port,
  its lifespan run, stopped after the test (needs the ``server`` extra).

``async def`` tests (pytest-asyncio) also run after pytest-playwright's sync tests in the same
session: Playwright's sync API leaves its event loop set on the test thread, which pytest-asyncio
refuses ("cannot be called from a running event loop"); for the phases of an ``async def`` test
this plugin unsets it, and sets it back after.

pytest imports every installed plugin at start-up, so this module stays import-light.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

# pytest-playwright 0.10 defines its session-scoped ``base_url`` fixture as a method, which
# pytest 9 deprecates on every run that uses ``page``: a warning the app's tests cannot act on.
_PLAYWRIGHT_BASE_URL_WARNING = (
    "ignore:Session-scoped fixtures defined as instance methods are deprecated:pytest.PytestRemovedIn10Warning"
)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Quiet runs for an app's tests: pytest-asyncio's loop scope defaults to ``function`` (its
    own future default) when the app's configuration leaves it unset, instead of a deprecation
    warning on every run; pytest-playwright's own deprecation (above) is filtered."""
    config.addinivalue_line("filterwarnings", _PLAYWRIGHT_BASE_URL_WARNING)
    _default_asyncio_loop_scope(config)


def _default_asyncio_loop_scope(config: pytest.Config) -> None:
    name = "asyncio_default_fixture_loop_scope"
    try:
        if config.getini(name):
            return  # the app chose
    except ValueError:
        return  # pytest-asyncio is not installed
    cache = getattr(config, "_inicache", None)  # pytest keeps read values here (no public setter)
    if isinstance(cache, dict):
        cache[name] = "function"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-surface-snapshots",
        action="store_true",
        default=False,
        help="agentsurface: rewrite stored semantic surface snapshots",
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


@pytest.fixture
def static_server(request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    """``static_server("site")`` serves a folder (relative to pytest's rootdir, or absolute) on
    a free 127.0.0.1 port and returns its base URL, e.g. ``http://127.0.0.1:41234``; every
    server it started stops after the test."""
    from .static import StaticServer

    servers: list[StaticServer] = []

    def serve(folder: str | Path = "site") -> str:
        path = Path(folder)
        if not path.is_absolute():
            path = Path(str(request.config.rootpath)) / path
        server = StaticServer(path)
        servers.append(server)
        return server.url

    yield serve
    for server in servers:
        server.close()


@pytest.fixture
def asgi_server() -> Iterator[Callable[..., str]]:
    """``asgi_server(app)`` serves an ASGI app (a page's files and its procedure server, e.g. a
    Starlette app mounting both) with uvicorn on a free 127.0.0.1 port and returns its base URL;
    every server it started stops after the test."""
    from .asgi import AsgiServer

    servers: list[AsgiServer] = []

    def serve(app: Any) -> str:
        server = AsgiServer(app)
        servers.append(server)
        return server.url

    yield serve
    for server in servers:
        server.close()


def _async_test(item: pytest.Item) -> bool:
    return inspect.iscoroutinefunction(getattr(item, "obj", None))


def _without_playwright_loop(item: pytest.Item) -> Generator[None, Any, Any]:
    """Unset the event loop Playwright's sync API leaves on the thread, for an async test's
    phase, then set it back (if it is still open)."""
    from agentsurface._compat import running_loop_or_none, set_running_loop  # only when a test runs

    previous = running_loop_or_none() if _async_test(item) else None
    if previous is None:
        return (yield)
    set_running_loop(None)
    try:
        return (yield)
    finally:
        if not previous.is_closed():
            set_running_loop(previous)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _without_playwright_loop(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    return (yield from _without_playwright_loop(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    return (yield from _without_playwright_loop(item))
