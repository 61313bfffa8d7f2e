"""The WebMCP curation hook's verdicts (None keeps, False skips, a mapping rewords), and the
answers the adapter shares with the rest of the library: a shut-down surface answers exactly as
the toolset and the pipeline do, and a tool kept from an old listing reports the live version."""

from __future__ import annotations

from typing import Any

import pytest

from agentsurface._core.errors import surface_shut_down
from agentsurface._core.pipeline.invocation import InvocationResult
from agentsurface.adapters.model_context import Shape, ToolCall
from agentsurface.toolset import AgentToolset

from .conftest import Start
from .fakes import SHAPES
from .surface import CONSUMER, App

SELECT = "view_devices__table__selectRows"
ROWS = "view_devices__table__visibleRows"
PURGE = "domain_devices__purge"


# --------------------------------------------------------------------------- curation verdicts


@pytest.mark.parametrize("shape", SHAPES)
async def test_a_curation_hook_that_returns_none_keeps_every_capability(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    seen: list[str] = []

    def curate(descriptor: Any) -> None:  # logs, and forgets to return a verdict
        seen.append(descriptor.capability_id)

    _plain, plain_fake = await start(shape)
    adapter, fake = await start(shape, expose_capability=curate)
    assert seen  # the hook ran
    assert fake.agent.tools() == plain_fake.agent.tools()
    assert fake.agent.names() == app.expected_names()
    assert adapter.diagnostics == []


@pytest.mark.parametrize("shape", SHAPES)
async def test_curation_false_skips_true_keeps_and_a_mapping_rewords(
    app: App, start: Start, shape: Shape
) -> None:
    app.mount_table()
    verdicts: dict[str, Any] = {
        "domain:devices.purge": False,
        "view:devices.table.visibleRows": True,
        "view:devices.table.selectRows": {"description": "Pick rows"},
    }
    _plain, plain_fake = await start(shape)
    _adapter, fake = await start(shape, expose_capability=lambda d: verdicts.get(d.capability_id))
    assert fake.agent.names() == plain_fake.agent.names() - {PURGE}
    assert fake.agent.tool(ROWS) == plain_fake.agent.tool(ROWS)
    assert fake.agent.tool(SELECT).description == "[view · local-state] Pick rows"


async def test_a_curation_verdict_of_another_type_keeps_the_capability_and_says_so(
    app: App, start: Start
) -> None:
    app.mount_table()
    adapter, fake = await start("abortable", expose_capability=lambda d: "hide")
    assert fake.agent.names() == app.expected_names()
    assert any("expose_capability returned str" in d for d in adapter.diagnostics)


# --------------------------------------------------------------------------- shared answers


async def test_a_shut_down_surface_answers_alike_in_the_adapter_and_both_toolset_modes(
    app: App, start: Start
) -> None:
    app.mount_table()
    _adapter, fake = await start("abortable")
    direct = AgentToolset(app.registry, consumer=CONSUMER, topology="embedded")
    meta = AgentToolset(app.registry, consumer=CONSUMER, topology="embedded", mode="meta")
    select = next(t for t in direct.tools() if t.name == SELECT)
    act = next(t for t in meta.tools() if t.name == "surface_act")
    app.registry.close()
    expected = surface_shut_down().to_json()
    assert expected["code"] == "CANCELLED" and expected["retry"] == "no"
    from_browser = await fake.agent.call(SELECT, {"ids": ["d1"]})
    assert from_browser.is_error and from_browser.payload == expected
    from_direct = await select.execute({"ids": ["d1"]})
    from_meta = await act.execute({"capabilityId": "view:devices.table.selectRows", "input": {"ids": ["d1"]}})
    assert from_direct.error is not None and from_direct.error.to_json() == expected
    assert from_meta.error is not None and from_meta.error.to_json() == expected
    assert app.calls["selectRows"] == 0


async def test_a_tool_kept_from_an_old_listing_reports_the_live_surface_version(
    app: App, start: Start
) -> None:
    table = app.mount_table()
    adapter, _fake = await start("abortable")
    table.close()
    app.mount_notes()
    await adapter.settled()
    assert SELECT not in adapter.tool_names
    outcome = adapter._start_call(SELECT, {"ids": ["d1"]}, ToolCall())  # what the tool's execute asks
    assert isinstance(outcome, InvocationResult)  # answered at once, nothing to wait for
    assert outcome.code == "CAPABILITY_NOT_FOUND"
    assert outcome.surface_version == app.registry.version != "0"
