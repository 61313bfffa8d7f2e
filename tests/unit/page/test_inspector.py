"""The surface inspector (CPython, fake DOM): rows as the agent sees them, a call log, and one
render per animation frame however many events arrive; text only."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Invocation,
    action,
    compile_manifest,
)
from agentsurface.page import PageSurface
from agentsurface.page.inspector import SurfaceInspector

from .fake_dom import FakeDom, FakeElement
from .surface import Board, BoardState, make_registry


async def test_rows_logs_and_one_render_per_frame() -> None:
    dom = FakeDom()
    registry = make_registry()
    surface = PageSurface(registry, dom=dom)
    surface.mount(Board(BoardState()))
    root = FakeElement()
    inspector = SurfaceInspector(registry, root, dom=dom)
    dom.run_frame()
    assert inspector.renders == 1
    rows = {row.capability_id: row for row in inspector.rows()}
    assert rows["view:board.canvas.undo"].available is False
    assert rows["view:board.canvas.draw"].available is True
    for index in range(20):
        result = await registry.invoke(Invocation("view:board.canvas.draw", {"label": f"<b>{index}</b>"}))
        assert result.ok
    await registry.invoke(Invocation("view:board.canvas.draw", {"label": 5}))  # INVALID_INPUT
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert dom.run_frame() == 1 and inspector.renders == 2  # 21 calls, one render
    assert [entry.outcome for entry in list(inspector.calls)[:2]] == ["INVALID_INPUT", "ok"]
    text = root.all_text()
    assert "Tools the agent sees" in text and "view:board.canvas.undo" in text
    assert "INVALID_INPUT" in text and "ms" in text
    assert "<b>" not in text  # inputs are never shown, let alone as HTML
    assert dom.frames == []
    inspector.close()
    await registry.invoke(Invocation("view:board.canvas.draw", {"label": "late"}))
    assert dom.frames == [] and inspector.renders == 2


def test_the_inspector_is_labelled_for_assistive_technology() -> None:
    dom = FakeDom()
    root = FakeElement()
    SurfaceInspector(make_registry(), root, dom=dom)
    (section,) = root.children
    assert section.tag == "section" and section.attributes["aria-labelledby"] == "agent-inspector-title"
    log = next(child for child in section.children if child.attributes.get("role") == "log")
    assert [child.tag for child in log.children] == ["ol"]  # the live region holds a real list
    ids = {child.attributes.get("id") for child in section.children}
    assert {"agent-inspector-title", "agent-inspector-tools-title", "agent-inspector-calls-title"} <= ids


class Wiper(AgentComponent, type="board.wiper", description="Wipes the board"):
    @action("Wipe everything", confirmation="required")
    def wipe(self) -> int:
        return 0


async def test_a_consequential_tool_without_a_dialog_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 43.6: forgetting ConfirmationDialog left a call waiting 120 s with
    nothing to click and nothing said; the inspector says it, and the first such call logs it
    (the page's console)."""
    dom = FakeDom()
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Wiper])))
    registry.register(Wiper())
    root = FakeElement()
    inspector = SurfaceInspector(registry, root, dom=dom)
    dom.run_frame()
    assert inspector.warnings() == [
        "view:board.wiper.wipe need the person's approval, but no confirmation dialog is installed: "
        "calls would wait until their approval expires (ConfirmationDialog(registry))"
    ]
    assert "Warning: view:board.wiper.wipe need the person's approval" in root.all_text()
    with caplog.at_level(logging.WARNING, logger="agentsurface"):
        first = await registry.invoke(Invocation("view:board.wiper.wipe", {}))
        await registry.invoke(Invocation("view:board.wiper.wipe", {}))  # warned once, not per call
    assert first.code == "CONFIRMATION_REQUIRED"
    warned = [r.getMessage() for r in caplog.records if "nothing shows it" in r.getMessage()]
    assert warned == [
        "view:board.wiper.wipe waits for the person's approval (for up to 120 s), but nothing shows it: no "
        "confirmation dialog is installed (agentsurface.page.ConfirmationDialog(registry), or a "
        "dialog of your own subscribed to registry.confirmations)"
    ]
    # A dialog subscribed: no warning any more (the next render follows a confirmation request).
    unsubscribe = registry.confirmations.subscribe(lambda _pending: None)
    assert inspector.warnings() == []
    await registry.invoke(Invocation("view:board.wiper.wipe", {"x": 1}))
    await asyncio.sleep(0)
    dom.run_frame()
    assert "Warning" not in root.all_text()
    unsubscribe()
    inspector.close()
    registry.close()
