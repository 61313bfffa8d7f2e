"""The inspector's call log has one row per call (a confirmed call's approval round inside it,
as the WebMCP adapter runs it: the same invocation id, again with the confirmation), shows the
reason an app's ``when()`` check gives, and shows the page's start-up error."""

from __future__ import annotations

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    Change,
    Invocation,
    InvocationResult,
    action,
    compile_manifest,
    create_capability_authority,
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
    registry = AgentSurfaceRegistry(authority=create_capability_authority(compile_manifest([Board])))
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
    registry = AgentSurfaceRegistry(authority=create_capability_authority(compile_manifest([Sketch])))
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
