"""Availability that follows state (CPython, fake DOM): State assignments, settled actions
and user events each lead to one coalesced re-evaluation; a changed describe() note is
republished; the app never calls sync_availability()."""

from __future__ import annotations

import asyncio

from agentsurface import Invocation
from agentsurface.page import Coalescer, PageSurface

from .fake_dom import FakeDom, FakeElement
from .surface import Board, BoardState, make_registry

UNDO = "view:board.canvas.undo"


def undo_available(surface: PageSurface) -> bool:
    return next(c.available for c in surface.registry.snapshot().capabilities() if c.capability_id == UNDO)


def attached(state: BoardState) -> tuple[PageSurface, FakeDom]:
    dom = FakeDom()
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement()
    dom.insert(element)
    surface.attach(Board(state), element)
    return surface, dom


def flips(surface: PageSurface) -> list[bool]:
    seen: list[bool] = []
    surface.registry.subscribe(lambda e: seen.append(e["available"]) if e.type == "availability-changed" else None)
    return seen


async def test_state_assignments_in_one_turn_cost_one_re_evaluation() -> None:
    state = BoardState()
    surface, _dom = attached(state)
    seen = flips(surface)
    await asyncio.sleep(0)
    runs = surface.availability.runs
    for index in range(10):
        state.strokes = [*state.strokes, f"s{index}"]
    assert seen == []  # nothing yet: coalesced to the next turn
    await asyncio.sleep(0)
    assert seen == [True] and surface.availability.runs == runs + 1
    state.strokes = []
    await asyncio.sleep(0)
    assert seen == [True, False]


async def test_a_settled_action_re_evaluates_without_any_state_container() -> None:
    state = BoardState()
    surface, _dom = attached(state)
    seen = flips(surface)
    object.__setattr__(state, "strokes", ["quiet"])  # a change nobody announces
    await asyncio.sleep(0)
    assert seen == []
    result = await surface.registry.invoke(Invocation("view:board.canvas.draw", {"label": "x"}))
    assert result.ok
    await asyncio.sleep(0)
    assert seen == [True]


async def test_an_observation_reads_and_re_evaluates_nothing() -> None:
    """An observation is a read: it does not change the app's state (the testing harness finds
    one that does: ImpureObservation). A read costs no re-evaluation, so an agent polling a page
    does not make it redo its checks."""
    state = BoardState()
    surface, _dom = attached(state)
    seen = flips(surface)
    await asyncio.sleep(0)
    runs = surface.availability.runs
    object.__setattr__(state, "strokes", ["quiet"])
    for _ in range(3):
        assert (await surface.registry.invoke(Invocation("view:board.canvas.strokes", {}))).ok
        await asyncio.sleep(0)
    assert seen == [] and surface.availability.runs == runs


async def test_user_events_re_evaluate_once_per_animation_frame() -> None:
    state = BoardState()
    surface, dom = attached(state)
    seen = flips(surface)
    object.__setattr__(state, "strokes", ["by a click handler"])
    for _ in range(5):
        dom.fire("click")
    dom.fire("keydown")
    runs = surface.availability.runs
    assert dom.run_frame() == 1 and surface.availability.runs == runs + 1
    assert seen == [True] and undo_available(surface)
    dom.fire("scroll")  # not followed
    assert dom.frames == []


async def test_a_changed_note_is_republished_with_a_version_bump() -> None:
    state = BoardState()
    surface, _dom = attached(state)
    await asyncio.sleep(0)
    surface.availability.reevaluate()  # the baseline fingerprint
    before = surface.registry.revision
    state.format = "png"
    await asyncio.sleep(0)
    assert surface.registry.revision == before + 1
    notes = [p.contextual_note for p in surface.registry.snapshot().procedures]
    assert notes == ["exports as png"]
    state.format = "png"  # same value: nothing an agent sees changed
    await asyncio.sleep(0)
    assert surface.registry.revision == before + 1


async def test_changed_covers_state_kept_outside_a_state_container() -> None:
    state = BoardState()
    surface, _dom = attached(state)
    seen = flips(surface)
    object.__setattr__(state, "strokes", ["x"])
    surface.changed()
    surface.changed()
    await asyncio.sleep(0)
    assert seen == [True]


async def test_a_closed_surface_no_longer_follows_state() -> None:
    state = BoardState()
    surface, _dom = attached(state)
    surface.close()
    runs = surface.availability.runs
    state.strokes = ["x"]
    await asyncio.sleep(0)
    assert surface.availability.runs == runs


def test_the_coalescer_runs_once_per_slot_and_again_for_a_request_during_its_run() -> None:
    slots: list[object] = []
    ran: list[int] = []
    coalescer: Coalescer

    def work() -> None:
        ran.append(1)
        if len(ran) == 1:
            coalescer.request()  # state changed while we read it: one more run

    coalescer = Coalescer(work, lambda callback: (slots.append(callback), lambda: None)[1])
    for _ in range(5):
        coalescer.request()
    assert len(slots) == 1 and coalescer.pending and coalescer.requests == 5
    slots.pop()()
    assert ran == [1] and len(slots) == 1
    slots.pop()()
    assert ran == [1, 1] and not coalescer.pending and coalescer.runs == 2
    coalescer.close()
    coalescer.request()
    assert slots == []


def test_without_a_running_loop_the_work_runs_at_once() -> None:
    ran: list[int] = []
    coalescer = Coalescer(lambda: ran.append(1))
    coalescer.request()
    coalescer.request()
    assert ran == [1, 1] and not coalescer.pending


def test_a_failing_run_does_not_stop_later_ones() -> None:
    calls: list[int] = []

    def work() -> None:
        calls.append(1)
        raise ValueError("boom")

    coalescer = Coalescer(work)
    coalescer.request()
    coalescer.request()
    assert calls == [1, 1]
