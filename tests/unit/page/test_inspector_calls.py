"""The inspector's call log has one row per call (a confirmed call's approval round inside it,
as the WebMCP adapter runs it: the same invocation id, again with the confirmation), shows the
reason an app's ``when()`` check gives, and shows the page's start-up error."""

from __future__ import annotations

import asyncio
from typing import Any

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Change,
    Invocation,
    InvocationResult,
    action,
    compile_manifest,
    observation,
)
from agentsurface.page.inspector import SurfaceInspector, startup_failed

from .fake_dom import FakeDom, FakeElement


class Board(AgentComponent, type="board.canvas", description="A drawing board"):
    def __init__(self) -> None:
        self.strokes = ["a", "b"]

    @action("Erase every stroke", confirmation="required")
    def erase_all(self) -> int:
        count, self.strokes = len(self.strokes), []
        return count

    @erase_all.when
    def has_strokes(self) -> bool:
        """The board is empty: draw something first."""
        return bool(self.strokes)


class Sketch(AgentComponent, type="board.sketch", description="A sketch whose erase previews its strokes"):
    def __init__(self) -> None:
        self.strokes = ["a", "b"]

    @action("Erase every stroke", confirmation="required")
    def erase_all(self) -> None:
        self.strokes = []

    @erase_all.preview
    def what_erase_changes(self) -> list[Change]:
        return [Change("sketch", "strokes", list(self.strokes), [])]


ERASE = "view:board.canvas.eraseAll"


def _setup() -> tuple[AgentSurfaceRegistry, SurfaceInspector, FakeDom, FakeElement]:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Board])))
    registry.register(Board())
    dom, root = FakeDom(), FakeElement()
    inspector = SurfaceInspector(registry, root, dom=dom)
    dom.run_frame()
    return registry, inspector, dom, root


async def _first_round(registry: AgentSurfaceRegistry, invocation_id: str) -> str:
    first = await registry.invoke(Invocation(ERASE, {}, invocation_id=invocation_id))
    assert first.code == "CONFIRMATION_REQUIRED" and first.error is not None and first.error.details
    return str(first.error.details["confirmationId"])


async def test_a_confirmed_call_is_one_row_with_its_approval_inside() -> None:
    registry, inspector, dom, root = _setup()
    cid = await _first_round(registry, "inv-1")
    dom.run_frame()
    (waiting,) = inspector.calls
    assert (waiting.status, waiting.confirmation) == ("pending", "waiting")
    assert "waiting for the person's approval" in root.all_text()
    registry.confirmations.resolve(cid, approved=True)
    second: InvocationResult = await registry.invoke(Invocation(ERASE, {}, invocation_id="inv-1", confirmation_id=cid))
    assert second.ok
    dom.run_frame()
    (row,) = inspector.calls  # one row for the call, not CONFIRMATION_REQUIRED then ok
    assert (row.outcome, row.confirmation, row.at) == ("ok", "approved", waiting.at)
    text = root.all_text()
    assert "approved by the person" in text and "CONFIRMATION_REQUIRED" not in text


async def test_a_denied_call_is_one_row_that_says_so() -> None:
    registry, inspector, dom, root = _setup()
    cid = await _first_round(registry, "inv-2")
    registry.confirmations.resolve(cid, approved=False)
    dom.run_frame()
    (row,) = inspector.calls
    assert (row.outcome, row.confirmation) == ("CONFIRMATION_INVALID", "denied")
    assert "denied by the person" in root.all_text()


async def test_a_call_refused_as_stale_is_one_row_that_says_so() -> None:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Sketch])))
    sketch = Sketch()
    registry.register(sketch)
    dom, root = FakeDom(), FakeElement()
    inspector = SurfaceInspector(registry, root, dom=dom)
    first = await registry.invoke(Invocation("view:board.sketch.eraseAll", {}, invocation_id="inv-s"))
    assert first.error is not None and first.error.details is not None
    cid = str(first.error.details["confirmationId"])
    sketch.strokes.append("c")  # drawn while the person reads the dialog
    assert registry.confirmations.resolve(cid, approved=True)
    dom.run_frame()
    (row,) = inspector.calls
    assert (row.outcome, row.confirmation) == ("CONFIRMATION_INVALID", "stale")
    assert "not applied: the state changed since the person was shown it" in root.all_text()
    assert sketch.strokes == ["a", "b", "c"]


async def test_an_unavailable_tool_shows_the_reason_the_app_gives() -> None:
    registry, inspector, dom, root = _setup()
    cid = await _first_round(registry, "inv-3")
    registry.confirmations.resolve(cid, approved=True)
    assert (await registry.invoke(Invocation(ERASE, {}, invocation_id="inv-3", confirmation_id=cid))).ok
    registry.sync_availability()
    dom.run_frame()
    (row,) = [r for r in inspector.rows() if r.capability_id == ERASE]
    assert row.available is False and row.reason == "The board is empty: draw something first."
    assert "unavailable: The board is empty: draw something first." in root.all_text()
    assert "not available right now" not in root.all_text()


def test_the_start_up_error_is_shown() -> None:
    _, inspector, dom, root = _setup()
    startup_failed("Traceback ...\nNameError: name 'Bord' is not defined")
    dom.run_frame()
    assert inspector.startup_error is not None
    assert "The page failed to start: Traceback" in root.all_text()
    assert "NameError: name 'Bord' is not defined" in root.all_text()
    inspector.close()
    startup_failed("later")  # a closed inspector is no longer told
    assert inspector.startup_error is not None and "later" not in inspector.startup_error


class CountingDom(FakeDom):
    """Counts the DOM work a render does (each create or write crosses into JavaScript)."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[str] = []
        self.replaced: list[FakeElement] = []
        self.texts = 0

    def create(self, tag: str, text: str | None = None, attributes: dict[str, str] | None = None) -> FakeElement:
        self.created.append(tag)
        return super().create(tag, text, attributes)

    def replace_children(self, parent: Any, children: Any) -> None:
        self.replaced.append(parent)
        super().replace_children(parent, children)

    def set_text(self, element: Any, text: str) -> None:
        self.texts += 1
        super().set_text(element, text)

    def reset(self) -> None:
        self.created, self.replaced, self.texts = [], [], 0


class Counter(AgentComponent, type="board.counter", description="A counter"):
    def __init__(self) -> None:
        self.n = 0

    @observation("The count")
    def count(self) -> int:
        return self.n


COUNT = "view:board.counter.count"


async def test_a_call_adds_one_row_and_leaves_the_tools_and_the_texts_alone() -> None:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Board, Counter])))
    registry.register(Board())
    registry.register(Counter())
    dom, root = CountingDom(), FakeElement()
    inspector = SurfaceInspector(registry, root, dom=dom)
    dom.run_frame()
    tools, log = inspector._tools, inspector._log
    assert len(tools.children) == 2
    for n in range(3):
        dom.reset()
        assert (await registry.invoke(Invocation(COUNT, {}))).status == "ok"
        assert dom.run_frame() == 1
        assert dom.created == ["li"]  # the new row, nothing else made again
        assert dom.replaced == [log] and dom.texts == 0
        assert len(log.children) == n + 1
    assert [child.text for child in log.children] == [inspector._call_item(e).text for e in inspector.calls]
    dom.reset()
    inspector._render()  # nothing changed: no DOM work at all
    assert (dom.created, dom.replaced, dom.texts) == ([], [], 0)


async def test_the_tools_are_rendered_again_when_the_surface_changes() -> None:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Board, Counter])))
    registry.register(Board())
    handle = registry.register(Counter())
    dom, root = CountingDom(), FakeElement()
    inspector = SurfaceInspector(registry, root, dom=dom)
    dom.run_frame()
    dom.reset()
    handle.close()
    await asyncio.sleep(0)  # surface-changed comes once per turn of the loop
    dom.run_frame()
    assert inspector._tools in dom.replaced and len(inspector._tools.children) == 1
    assert "v" in inspector._headline.text and dom.texts == 1  # the headline's surface version
