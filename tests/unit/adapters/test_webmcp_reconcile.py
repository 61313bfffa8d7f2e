"""How the WebMCP adapter keeps the browser in step with the surface: incremental vs provide
paths, when a tool is re-registered, surviving tools' versions, stop(), concurrent changes while
a registration is in flight, handle counts over many cycles, and meta mode (seed "Current
mapping", DESIGN §5)."""

from __future__ import annotations

import asyncio
import gc
import random
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface import Invocation
from agentsurface.adapters import projection
from agentsurface.adapters.model_context import Shape, WebMCPTool
from agentsurface.adapters.webmcp import WebMCPAdapter

from .conftest import Start
from .fakes import SHAPES, ProvideModelContext, make_context
from .surface import CONSUMER, App, make_app, turn

SELECT = "view_devices__table__selectRows"
ROWS = "view_devices__table__visibleRows"
DISABLE = "domain_devices__disable"
PURGE = "domain_devices__purge"
NOTES = "view_notes__list__items"
INCREMENTAL: tuple[Shape, ...] = ("abortable", "incremental")


# --------------------------------------------------------------------------- incremental path


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_incremental_path_touches_only_added_removed_or_changed_tools(
    app: App, start: Start, shape: Shape
) -> None:
    table = app.mount_table()
    adapter, fake = await start(shape)
    assert fake.count("register") == len(app.expected_names())
    assert fake.count("provide") == 0
    fake.reset_log()

    table.update(availability={"selectRows": False})  # one capability leaves
    await adapter.settled()
    assert fake.operations() == [("unregister", SELECT)]

    fake.reset_log()
    table.update(availability={"selectRows": None})  # and comes back
    await adapter.settled()
    assert fake.operations() == [("register", SELECT)]

    fake.reset_log()
    app.mount_notes()  # one capability arrives
    await adapter.settled()
    assert fake.operations() == [("register", NOTES)]

    fake.reset_log()
    table.invalidate()  # the version moves, nothing a tool shows changes
    await adapter.settled()
    assert fake.operations() == []
    assert fake.errors == []


async def test_provide_path_resends_the_full_set_only_when_it_changed(app: App, start: Start) -> None:
    table = app.mount_table()
    adapter, fake = await start("provide")
    assert isinstance(fake, ProvideModelContext)
    assert len(fake.provided) == 1
    assert set(fake.provided[0]) == app.expected_names()

    table.invalidate()
    app.mount_panel().update(enabled=True)  # no-op update on a new panel: one real change
    await adapter.settled()
    assert len(fake.provided) == 2
    assert set(fake.provided[-1]) == app.expected_names()

    table.invalidate()
    table.invalidate()
    await adapter.settled()
    assert len(fake.provided) == 2  # version-only changes re-send nothing

    table.update(availability={"selectRows": False})
    await adapter.settled()
    assert len(fake.provided) == 3
    assert set(fake.provided[-1]) == app.expected_names()
    assert fake.count("register") == fake.count("unregister") == 0
    assert fake.errors == []


# --------------------------------------------------------------------------- re-registration


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_a_changed_description_re_registers_that_tool_only(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    texts: dict[str, str] = {}

    def curate(descriptor: Any) -> dict[str, str]:
        text = texts.get(descriptor.capability_id)
        return {"description": text} if text else {}

    adapter, fake = await start(shape, expose_capability=curate)
    fake.reset_log()
    texts["view:devices.table.selectRows"] = "Pick rows"
    app.mount_panel().close()  # any surface change makes the adapter look again
    await adapter.settled()
    assert fake.operations() == [("unregister", SELECT), ("register", SELECT)]
    assert fake.agent.tool(SELECT).description.endswith("Pick rows")
    assert fake.errors == []


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_a_new_registration_id_re_registers_the_same_names(
    app: App, start: Start, shape: Shape
) -> None:
    table = app.mount_table()
    app.mount_notes()
    adapter, fake = await start(shape)
    names = app.expected_names() - {NOTES}
    fake.reset_log()
    table.close()
    app.mount_table()  # same component, same instance, new registration id: one reconcile
    await adapter.settled()
    ops = fake.operations()
    assert {n for op, n in ops if op == "unregister"} == names
    assert {n for op, n in ops if op == "register"} == names
    for name in names:  # withdrawn before registered again: the browser refuses duplicates
        assert ops.index(("unregister", name)) < ops.index(("register", name))
    assert fake.count("register", NOTES) == 0
    assert fake.errors == []
    result = await fake.agent.call(SELECT, {"ids": ["d1"]})
    assert not result.is_error, result.payload


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_a_changed_input_schema_re_registers_the_tool(app: App, start: Start, shape: Shape) -> None:
    table = app.mount_table(procedures=("domain:devices.disable",), bound=("ids",))
    adapter, fake = await start(shape)
    bound_schema = fake.agent.tool(DISABLE).input_schema
    assert "ids" not in bound_schema["properties"]  # bound to the selection, locked
    fake.reset_log()
    table.close()
    app.mount_detail(procedures=("domain:devices.disable",))
    await adapter.settled()
    assert fake.count("unregister", DISABLE) == 1 and fake.count("register", DISABLE) == 1
    assert "ids" in fake.agent.tool(DISABLE).input_schema["properties"]
    assert fake.errors == []


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_a_changed_read_only_hint_re_registers_the_tool(
    app: App, start: Start, shape: Shape, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One registry cannot give a capability id two effects, so the hint is flipped at its
    # source: the contract-derived annotations the adapter projects.
    flipped: set[str] = set()
    derive = projection.annotations_for

    def annotations_for(descriptor: Any, shape: str) -> dict[str, bool]:
        out = derive(descriptor, shape)
        return {**out, "readOnlyHint": True} if descriptor.capability_id in flipped else out

    monkeypatch.setattr(projection, "annotations_for", annotations_for)
    table = app.mount_table()
    adapter, fake = await start(shape)
    assert fake.agent.tool(SELECT).annotations.get("readOnlyHint", False) is False
    fake.reset_log()
    flipped.add("view:devices.table.selectRows")
    table.invalidate()
    await adapter.settled()
    assert fake.operations() == [("unregister", SELECT), ("register", SELECT)]
    assert fake.agent.tool(SELECT).annotations["readOnlyHint"] is True


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_unrelated_changes_keep_registrations(app: App, start: Start, shape: Shape) -> None:
    table = app.mount_table()
    adapter, fake = await start(shape)
    fake.reset_log()
    app.mount_panel("p1")
    table.invalidate()
    await adapter.settled()
    app.mount_notes()
    await adapter.settled()
    touched = {n for _op, n in fake.operations()}
    assert touched == {"view_aux__panel__status", "view_aux__panel__toggle", NOTES}


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_surviving_tool_echoes_the_latest_surface_version(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    adapter, fake = await start(shape)
    discovered = app.registry.version
    registrations = fake.count("register", PURGE)
    app.mount_panel()  # unrelated change: the version moves on
    await adapter.settled()
    assert app.registry.version != discovered
    assert fake.count("register", PURGE) == registrations  # kept its registration
    # Premise: the destructive procedure fails closed on the discovery-time version...
    reg_id = app.registry.registrations()[0].registration_id
    stale = await app.registry.invoke(
        Invocation("domain:devices.purge", {"ids": ["d1"]}, "probe", None, reg_id, None, discovered),
        consumer=CONSUMER,
    )
    assert stale.code == "STALE_CAPABILITY"
    # ...yet the surviving tool works, because the adapter echoes the latest version.
    result = await fake.agent.call(PURGE, {"ids": ["d1"]})
    assert not result.is_error, result.payload
    assert result.payload == {"done": "domain:devices.purge", "ids": ["d1"]}
    assert app.calls["domain:devices.purge"] == 1


# --------------------------------------------------------------------------- stop()


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_stop_unregisters_its_own_names_and_releases_everything(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    fake = make_context(shape)

    async def other(_input: Any, _call: Any) -> dict[str, Any]:
        return {"content": []}

    fake.add_foreign_tool(WebMCPTool("someone_else", "Other", "Another script's tool", {}, {}, other))
    adapter, _ = await start(fake)
    ours = set(adapter.tool_names)
    assert ours == app.expected_names()
    fake.reset_log()
    await adapter.aclose()
    assert {n for op, n in fake.operations() if op == "unregister"} == ours
    assert fake.count("unregister") == len(ours)
    assert fake.count("clear") == 0 and fake.count("provide") == 0
    assert set(fake.tools) == {"someone_else"}
    assert fake.live_handles == 0
    assert fake.disposed == 1
    assert adapter.tool_names == []
    # The subscription is gone: later changes touch nothing.
    fake.reset_log()
    app.mount_panel()
    app.mount_notes()
    await turn()
    await adapter.settled()
    assert fake.operations() == []
    # Safe to call again.
    await adapter.aclose()
    assert fake.operations() == [] and fake.disposed == 1
    assert fake.used_after_dispose == []


@pytest.mark.parametrize("shape", SHAPES)
async def test_stop_releases_the_registry_subscription(app: App, shape: Shape) -> None:
    app.mount_table()
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    ref = weakref.ref(adapter)
    await adapter.aclose()
    del adapter
    gc.collect()
    # Nothing (the registry's listeners above all) keeps a stopped adapter alive.
    assert ref() is None


@pytest.mark.parametrize("has_clear", [True, False])
async def test_stop_on_the_provide_path_clears_or_provides_nothing(
    app: App, start: Start, has_clear: bool
) -> None:
    app.mount_table()
    fake = ProvideModelContext(has_clear=has_clear)
    adapter, _ = await start(fake)
    assert fake.agent.names() == app.expected_names()
    fake.reset_log()
    await adapter.aclose()
    if has_clear:
        assert fake.operations() == [("clear", None)]
    else:
        assert fake.operations() == [("provide", None)]
        assert fake.provided[-1] == []
    assert fake.tools == {} and fake.live_handles == 0
    fake.reset_log()
    app.mount_panel()
    await turn()
    await adapter.aclose()
    assert fake.operations() == []


async def _start_held(app: App, shape: Shape) -> tuple[Any, WebMCPAdapter, asyncio.Future[None]]:
    """The table mounted, and start() on a fake whose registrations are held: (fake, adapter, the
    start, which finishes once ``fake.release()``)."""
    app.mount_table()
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    fake.hold()
    starting = asyncio.ensure_future(adapter.start(registry=app.registry, consumer=CONSUMER))
    await turn()
    return fake, adapter, starting


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_new_tools_are_asked_for_together(app: App, shape: Shape) -> None:
    # One turn of the loop asks for every new tool (the browser's promises then settle together):
    # with the registration held, all of them are in flight at once.
    fake, adapter, starting = await _start_held(app, shape)
    expected = app.expected_names()
    assert fake.suspended == len(expected) > 1
    registered = [name for operation, name in fake.operations() if operation == "register"]
    fake.release()
    await starting
    assert set(registered) == expected and len(registered) == len(expected)
    await adapter.aclose()
    assert fake.live_handles == 0


@pytest.mark.parametrize("shape", INCREMENTAL)
async def test_a_registration_that_raises_unexpectedly_keeps_the_others(app: App, shape: Shape) -> None:
    app.mount_table()
    fake = make_context(shape)
    register = fake.register_tool

    async def breaking(tool: WebMCPTool) -> None:
        if tool.name == SELECT:
            raise RuntimeError("the browser's call broke")
        await register(tool)

    fake.register_tool = breaking  # type: ignore[method-assign]
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    await adapter.settled()
    assert fake.agent.names() == app.expected_names() - {SELECT}
    assert any("the browser's call broke" in line for line in adapter.diagnostics)
    await adapter.aclose()  # every tool that went through is withdrawn: none was lost track of
    assert fake.agent.names() == set()
    assert fake.live_handles == 0


@pytest.mark.parametrize("shape", SHAPES)
async def test_stop_during_an_in_flight_registration_leaves_nothing_behind(app: App, shape: Shape) -> None:
    app.mount_table()
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    fake.hold()
    app.mount_panel()
    app.mount_notes()
    await turn()
    assert fake.suspended >= 1  # registrations (asked for together), or provideContext, in flight
    stopping = asyncio.ensure_future(adapter.aclose())
    await turn()
    fake.release()
    await stopping
    assert fake.agent.names() == set()
    assert fake.live_handles == 0
    assert fake.errors == []


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_surface_change_during_start_converges_without_duplicates(app: App, shape: Shape) -> None:
    fake, adapter, starting = await _start_held(app, shape)
    assert fake.suspended >= 1  # start() is inside its first registrations
    app.mount_panel()
    await turn()
    fake.release()
    await starting
    await adapter.settled()
    try:
        assert fake.errors == []
        assert adapter.diagnostics == []
        assert fake.agent.names() == app.expected_names()
        assert fake.live_handles == len(fake.tools)
    finally:
        await adapter.aclose()
    assert fake.live_handles == 0


@pytest.mark.parametrize("shape", SHAPES)
async def test_stop_during_start_leaves_nothing_behind(app: App, shape: Shape) -> None:
    fake, adapter, starting = await _start_held(app, shape)
    assert fake.suspended >= 1  # start() is inside its first registrations
    stopping = asyncio.ensure_future(adapter.aclose())
    await turn()
    fake.release()
    await starting
    await stopping
    assert fake.agent.names() == set()
    assert fake.live_handles == 0
    fake.reset_log()
    app.mount_panel()
    await turn()
    assert fake.operations() == []


# --------------------------------------------------------------------------- convergence


Op = tuple[str, int]
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["mount", "unmount", "hide", "show", "table", "untable", "invalidate", "hold", "release", "turn"]
        ),
        st.integers(min_value=0, max_value=3),
    ),
    min_size=1,
    max_size=40,
)


async def _interleave(shape: Shape, ops: list[Op], register_yields: int) -> None:
    app = make_app()
    fake = make_context(shape, register_yields=register_yields)
    adapter = WebMCPAdapter(model_context=fake)
    panels: dict[int, Any] = {}
    table: Any = app.mount_table()
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    for op, arg in ops:
        if op == "mount" and arg not in panels:
            panels[arg] = app.mount_panel(f"p{arg}")
        elif op == "unmount" and arg in panels:
            panels.pop(arg).close()
        elif op == "hide" and arg in panels:
            panels[arg].update(availability={"toggle": False})
        elif op == "show" and arg in panels:
            panels[arg].update(availability={"toggle": None})
        elif op == "table":
            if table is None:
                table = app.mount_table()
            else:
                table.update(availability={"selectRows": arg % 2 == 0})
        elif op == "untable" and table is not None:
            table.close()
            table = None
        elif op == "invalidate" and panels:
            next(iter(panels.values())).invalidate()
        elif op == "hold":
            fake.hold()
        elif op == "release":
            fake.release()
        elif op == "turn":
            await turn(arg + 1)
    fake.release()
    await adapter.settled()
    try:
        assert fake.errors == [], fake.errors
        assert adapter.diagnostics == []
        assert fake.agent.names() == app.expected_names()
        assert set(adapter.tool_names) == fake.agent.names()
        assert fake.live_handles == len(fake.tools)
        # Every listed tool reaches its live target (no orphan pointing at a dead registration).
        for name in sorted(fake.agent.names()):
            if name.endswith(("status", "visibleRows")) or "status_at_" in name:
                result = await fake.agent.call(name)
                assert not result.is_error, (name, result.payload)
    finally:
        await adapter.aclose()
    assert fake.live_handles == 0 and fake.agent.names() == set()
    assert fake.used_after_dispose == []


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=60)
@given(ops=OPS, register_yields=st.integers(min_value=0, max_value=3))
def test_concurrent_surface_changes_converge_to_the_latest_surface(
    shape: Shape, ops: list[Op], register_yields: int
) -> None:
    asyncio.run(_interleave(shape, ops, register_yields))


@pytest.mark.parametrize("seed", range(20))
async def test_seeded_random_interleavings_converge(seed: int) -> None:
    rng = random.Random(seed)
    kinds = ["mount", "unmount", "hide", "show", "table", "untable", "invalidate", "hold", "release", "turn"]
    ops = [(rng.choice(kinds), rng.randrange(4)) for _ in range(60)]
    await _interleave(SHAPES[seed % 3], ops, rng.randrange(4))


# --------------------------------------------------------------------------- handle counting


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_thousand_mount_cycles_leave_no_live_handles(app: App, shape: Shape) -> None:
    app.mount_table()
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    base = fake.live_handles
    for i in range(1000):
        panel = app.mount_panel(f"p{i % 7}")
        await adapter.settled()
        assert fake.live_handles == len(fake.tools) == base + 2
        panel.close()
        await adapter.settled()
        assert fake.live_handles == base
    assert fake.errors == [] and adapter.diagnostics == []
    await adapter.aclose()
    assert fake.live_handles == 0
    assert fake.tools == {}


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_burst_of_changes_is_coalesced(app: App, shape: Shape) -> None:
    app.mount_table()
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake)
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    fake.reset_log()
    for i in range(1000):
        app.mount_panel(f"p{i % 5}").close()
    await adapter.settled()
    assert fake.operations() == []  # the loop saw only the final surface: nothing changed
    await adapter.aclose()
    assert fake.live_handles == 0


# --------------------------------------------------------------------------- meta mode


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("panels", [0, 1, 40])
async def test_meta_mode_exposes_exactly_three_tools(app: App, shape: Shape, panels: int) -> None:
    for i in range(panels):
        app.mount_panel(f"p{i}")
    fake = make_context(shape)
    adapter = WebMCPAdapter(model_context=fake, mode="meta")
    await adapter.start(registry=app.registry, consumer=CONSUMER)
    await adapter.settled()
    meta = {"surface_discover", "surface_read", "surface_act"}
    assert fake.agent.names() == meta
    fake.reset_log()
    table = app.mount_table()
    app.mount_panel("late")
    await adapter.settled()
    assert fake.agent.names() == meta
    assert fake.operations() == []  # constant schemas: nothing re-registered
    listed = {t.name: t for t in fake.agent.tools()}
    assert listed["surface_discover"].annotations.get("readOnlyHint") is True
    assert listed["surface_read"].annotations.get("readOnlyHint") is True
    assert listed["surface_act"].annotations.get("readOnlyHint", False) is False
    discovered = await fake.agent.call("surface_discover", {})
    assert not discovered.is_error
    types = {c["type"] for c in discovered.payload["components"]}
    assert "devices.table" in types
    acted = await fake.agent.call(
        "surface_act",
        {"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d2"]}},
    )
    assert not acted.is_error, acted.payload
    assert app.selected == ["d2"]
    table.close()
    await adapter.aclose()
    assert fake.agent.names() == set() and fake.live_handles == 0
