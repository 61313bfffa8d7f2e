"""The console offers the agent only what the session says this person may do (the page side of
AS authority: hidden, not refused); the backend still re-checks every call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from demo.page.model import ConsoleState, Device
from demo.page.surface import create_console_surface
from demo.server.backend import start_demo_server

from agentsurface.testing import ManualClock, assert_exposes, assert_hidden, create_test_surface

from .test_scenario import read

WRITES = ("domain:devices.disable", "domain:devices.rename")


@pytest.fixture(scope="module")
def backend() -> Iterator[str]:
    server, url = start_demo_server(port=0)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


async def _never_called(procedure_id: str, effective_input: Any, ctx: Any) -> Any:
    raise AssertionError("discovery must not call the backend")


def surface_for(url: str, token: str) -> Any:
    session = read(url, "session.describe", token=token)
    listing = read(url, "devices.query", {"limit": 200}, token=token)
    state = ConsoleState()
    state.set_devices([Device.from_api(row) for row in listing["devices"]])
    state.select([state.devices[0].id])
    state.open_drawer(state.devices[0].id)  # every write would be available, were it allowed
    console = create_console_surface(state, _never_called, session=session, clock=ManualClock())
    console.mount_views()
    console.mount_drawer()  # as the page does while the drawer is open
    return create_test_surface(registry=console.registry, host=session)  # the harness owns the host


def test_a_viewers_agent_is_not_offered_the_write_procedures(backend: str) -> None:
    surface = surface_for(backend, "demo-acme-viewer")
    for capability in WRITES:
        assert_hidden(surface, capability)
    assert_exposes(surface, "domain:devices.query")


def test_an_operators_agent_is_offered_the_write_procedures(backend: str) -> None:
    surface = surface_for(backend, "demo-acme-operator")
    for capability in (*WRITES, "domain:devices.query"):
        assert_exposes(surface, capability)


def test_a_session_without_allowed_procedures_offers_no_procedure() -> None:
    state = ConsoleState()
    session = {"user": {"role": "operator"}}
    console = create_console_surface(state, _never_called, session=session, clock=ManualClock())
    console.mount_views()
    console.mount_drawer()
    surface = create_test_surface(registry=console.registry, host=session)
    for capability in (*WRITES, "domain:devices.query"):
        assert_hidden(surface, capability)
