"""AS-EXAMPLE-001: "show me the offline devices in Milan, select the visible ones and disable
them", scripted with no LLM, through the testing harness in CPython, against the real backend
(uvicorn + SQLite). The console's surface code is the same module the page runs, and its domain
calls go through the library's BackendBridge (httpx here, pyfetch in the page)."""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from demo.page.model import ConsoleState, Device
from demo.page.surface import DeviceDrawer, contracts, create_console_surface, reflecting
from demo.server.backend import PROCEDURES_BASE, start_demo_server

from agentsurface.bridge import BackendBridge
from agentsurface.page import page_surface
from agentsurface.testing import (
    ManualClock,
    TestSurface,
    assert_exposes,
    assert_exposes_unavailable,
    assert_fails_with,
    assert_hidden,
    assert_ok,
    create_test_surface,
)

TOKEN = "demo-acme-operator"


@pytest.fixture
def backend() -> Iterator[str]:
    server, url = start_demo_server(port=0)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


_bridges: list[BackendBridge] = []


@pytest.fixture(autouse=True)
async def close_bridges() -> AsyncIterator[None]:
    yield
    while _bridges:
        await _bridges.pop().aclose()


async def agent_bridge(url: str, token: str) -> BackendBridge:
    """The page's agent bridge, connected (the backend manifest checked against the contracts)."""
    bridge = BackendBridge(url + PROCEDURES_BASE,
                           headers={"Authorization": f"Bearer {token}", "X-AgentSurface-Channel": "agent"})
    _bridges.append(bridge)
    await bridge.connect(contracts())
    assert bridge.unserved == ()
    return bridge


def http(
    url: str, path: str, body: Any = None, token: str = TOKEN, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="POST" if data is not None else "GET")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def read(url: str, procedure: str, input: Any = None, token: str = TOKEN) -> Any:
    """One of the app's own reads (``session.describe``, ``devices.query``): a procedure call."""
    status, body = http(url, f"{PROCEDURES_BASE}/procedures/{procedure}",
                        {"invocationId": f"inv-read-{time.monotonic_ns()}", "input": input or {}}, token=token)
    assert status == 200, body
    return body["output"]


async def person_bridge(url: str, token: str) -> BackendBridge:
    """The page's bridge for the person's own calls (no channel header: the person is the caller)."""
    bridge = BackendBridge(url + PROCEDURES_BASE, headers={"Authorization": f"Bearer {token}"})
    _bridges.append(bridge)
    return bridge


async def console(
    url: str, token: str = TOKEN, session_token: str | None = None
) -> tuple[TestSurface, ConsoleState, list[tuple[str, Any]]]:
    """The console as the page builds it; ``session_token`` makes the page believe another
    session than the one its token really has (to reach the server's own check)."""
    state = ConsoleState()
    # As the page starts: its own reads through the person's bridge, like its buttons.
    session = await (await person_bridge(url, session_token or token)).call("domain:session.describe", {})
    listing = await (await person_bridge(url, token)).call("domain:devices.query", {"limit": 200})
    assert isinstance(session, dict) and isinstance(listing, dict)
    state.set_devices([Device.from_api(row) for row in listing["devices"]])
    results: list[tuple[str, Any]] = []

    def on_result(procedure_id: str, body: Any) -> None:
        results.append((procedure_id, body))
        rows = body.get("devices") or []
        if procedure_id != "domain:devices.query" and rows:
            state.upsert([Device.from_api(r) for r in rows])

    executor = reflecting(await agent_bridge(url, token), on_result)
    # The page's clock dates the confirmation evidence; the server checks it against its own.
    surface = create_console_surface(state, executor, session=session, clock=ManualClock(start=time.time()))
    surface.mount_views()  # what the page does by attaching them to their elements
    return create_test_surface(registry=surface.registry, host=session), state, results


def statuses(url: str, ids: list[str]) -> dict[str, str]:
    listing = read(url, "devices.query", {"limit": 200})
    return {d["id"]: d["status"] for d in listing["devices"] if d["id"] in ids}


async def select_offline_in_milan(surface: TestSurface) -> list[str]:
    assert_exposes_unavailable(surface, "domain:devices.disable", reason="Select at least one device first.")
    assert_ok(await surface.invoke("view:devices.filters.setFilters", {"status": "offline", "city": "Milan"}))
    rows = await surface.observe("view:devices.table.visibleRows")
    assert rows and all(r["status"] == "offline" and r["city"] == "Milan" for r in rows)
    selected = assert_ok(await surface.invoke("view:devices.table.selectVisible"))
    assert selected == [r["id"] for r in rows]
    assert_exposes(surface, "domain:devices.disable")
    return list(selected)


async def test_AS_EXAMPLE_001_disable_offline_devices_in_milan(backend: str) -> None:
    surface, state, _ = await console(backend)
    ids = await select_offline_in_milan(surface)

    first = await surface.invoke("domain:devices.disable", {"reason": "maintenance"})
    assert_fails_with(first, "CONFIRMATION_REQUIRED", effect="destructive")
    pending = surface.confirmations.pending()
    assert len(pending) == 1 and pending[0].input == {"deviceIds": ids, "reason": "maintenance"}
    assert statuses(backend, ids) == dict.fromkeys(ids, "offline")  # nothing happened yet

    surface.confirmations.approve()
    assert first.error is not None and first.error.details is not None
    done = await surface.invoke(
        "domain:devices.disable",
        {"reason": "maintenance"},
        invocation_id=first.invocation_id,
        confirmation_id=first.error.details["confirmationId"],
    )
    output = assert_ok(done)
    assert output["disabled"] == len(ids)
    assert statuses(backend, ids) == dict.fromkeys(ids, "disabled")  # the database changed
    assert {d.id for d in state.devices if d.status == "disabled"} >= set(ids)  # and the view
    assert await surface.observe("view:devices.table.visibleRows") == []  # no offline left in Milan

    replay = await surface.invoke(
        "domain:devices.disable",
        {"reason": "maintenance"},
        confirmation_id=first.error.details["confirmationId"],
    )
    assert replay.code in ("CONFIRMATION_INVALID", "CAPABILITY_NOT_AVAILABLE")


async def test_disable_previews_each_device_and_a_changed_row_refuses_it_as_stale(backend: str) -> None:
    """Issue 39.3: the dialog shows each selected device's status before → after; a selected
    row that changes before Approve (here a refresh shows one already disabled by someone
    else) refuses the call as stale: the backend is never called."""
    surface, state, results = await console(backend)
    ids = await select_offline_in_milan(surface)
    first = await surface.invoke("domain:devices.disable", {"reason": "maintenance"})
    (pending,) = surface.confirmations.pending()
    assert pending.preview is not None and pending.preview.total == len(ids)
    assert [(c.row.split(" · ")[0], c.field, c.before, c.after) for c in pending.preview.changes] == [
        (i, "status", "offline", "disabled") for i in ids
    ]
    changed = state.device(ids[0])
    assert changed is not None
    state.devices = [dataclasses.replace(d, status="disabled") if d.id == changed.id else d for d in state.devices]
    surface.confirmations.approve()
    assert first.error is not None and first.error.details is not None
    retry = await surface.invoke(
        "domain:devices.disable",
        {"reason": "maintenance"},
        invocation_id=first.invocation_id,
        confirmation_id=first.error.details["confirmationId"],
    )
    assert_fails_with(retry, "CONFIRMATION_INVALID", reason="stale")
    assert results == [] and statuses(backend, ids) == dict.fromkeys(ids, "offline")


async def test_AS_EXAMPLE_001_denial_leaves_the_database_unchanged(backend: str) -> None:
    surface, _, results = await console(backend)
    ids = await select_offline_in_milan(surface)
    first = await surface.invoke("domain:devices.disable", {})
    surface.confirmations.deny()
    assert first.error is not None and first.error.details is not None
    retry = await surface.invoke(
        "domain:devices.disable",
        {},
        invocation_id=first.invocation_id,
        confirmation_id=first.error.details["confirmationId"],
    )
    assert_fails_with(retry, "CONFIRMATION_INVALID", reason="denied")
    assert retry.error is not None and retry.error.retry == "no"
    assert statuses(backend, ids) == dict.fromkeys(ids, "offline")
    assert results == []  # the backend was never called


async def test_locked_selection_cannot_be_redirected_by_the_agent(backend: str) -> None:
    surface, _, results = await console(backend)
    await select_offline_in_milan(surface)
    result = await surface.invoke("domain:devices.disable", {"deviceIds": ["dev-0002"]})
    assert_fails_with(result, "INVALID_INPUT", lockedFields=["deviceIds"])
    assert surface.confirmations.pending() == [] and results == []


async def test_bait_and_switch_after_approval_fails_closed(backend: str) -> None:
    surface, state, results = await console(backend)
    ids = await select_offline_in_milan(surface)
    first = await surface.invoke("domain:devices.disable", {})
    surface.confirmations.approve()
    state.select(ids[:1])  # the selection changes after the user approved
    assert first.error is not None and first.error.details is not None
    retry = await surface.invoke(
        "domain:devices.disable",
        {},
        invocation_id=first.invocation_id,
        confirmation_id=first.error.details["confirmationId"],
    )
    assert_fails_with(retry, "CONFIRMATION_INVALID", reason="mismatch")
    assert results == [] and statuses(backend, ids) == dict.fromkeys(ids, "offline")


async def test_server_refusal_is_relayed_as_a_typed_error(backend: str) -> None:
    # A viewer may look, not disable; the page (told it is an operator) offers disable anyway.
    surface, _, _ = await console(backend, token="demo-acme-viewer", session_token=TOKEN)
    ids = await select_offline_in_milan(surface)
    first = await surface.invoke("domain:devices.disable", {})
    surface.confirmations.approve()
    assert first.error is not None and first.error.details is not None
    refused = await surface.invoke(
        "domain:devices.disable",
        {},
        invocation_id=first.invocation_id,
        confirmation_id=first.error.details["confirmationId"],
    )
    assert_fails_with(refused, "NOT_AUTHORIZED", origin="server")
    assert statuses(backend, ids) == dict.fromkeys(ids, "offline")


async def test_rename_is_bound_to_the_open_drawer(backend: str) -> None:
    surface, state, _ = await console(backend)
    assert_hidden(surface, "domain:devices.rename")  # the drawer's component exists only while it is open
    assert_ok(await surface.invoke("view:devices.table.openDevice", {"deviceId": "dev-0002"}))
    assert state.drawer == "dev-0002"
    # The page attaches a drawer component to the drawer's element when it renders it open.
    drawer = page_surface(surface.registry).mount(DeviceDrawer(state).bind(instance_id="main"))
    assert_exposes(surface, "domain:devices.rename")
    state.open_drawer(None)
    assert_exposes_unavailable(surface, "domain:devices.rename", reason="Open a device in the drawer first.")
    state.open_drawer("dev-0002")
    renamed = assert_ok(await surface.invoke("domain:devices.rename", {"name": "Rooftop north"}))
    drawer.close()
    assert_hidden(surface, "domain:devices.rename")
    assert renamed["device"]["id"] == "dev-0002" and renamed["device"]["name"] == "Rooftop north"
    listing = read(backend, "devices.query", {"limit": 200})
    assert {d["id"]: d["name"] for d in listing["devices"]}["dev-0002"] == "Rooftop north"


async def test_navigation_and_hidden_capabilities(backend: str) -> None:
    surface, state, _ = await console(backend)
    assert_ok(await surface.invoke("view:app.navigation.goTo", {"route": "activity"}))
    assert state.route == "activity"
    assert_hidden(surface, "view:devices.table.deleteEverything")
    assert_fails_with(await surface.invoke("view:app.navigation.goTo", {"route": "admin"}), "INVALID_INPUT")
