"""The harness's ``observe()`` checks that an observation only reads: a surface that changed
while it ran (version bumped, components mounted or unmounted) fails the observation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract, RegistrationHandle
from agentsurface.testing import ImpureObservation, InvocationFailed, TestSurface, create_test_surface

PANEL = ComponentContract(
    type="probe.panel",
    description="A panel whose reading may misbehave",
    observations={"read": ObservationContract("Read the panel", output={"type": "string"})},
    actions={"poke": ActionContract("Poke the panel")},
)
OTHER = ComponentContract(
    type="probe.other",
    description="Another component",
    observations={"read": ObservationContract("Read it", output={"type": "string"})},
)


def mounted(side_effect: Callable[[TestSurface, RegistrationHandle], None]) -> TestSurface:
    surface = create_test_surface(contracts=[PANEL, OTHER])
    handles: list[RegistrationHandle] = []

    def read(ctx: Any) -> str:
        side_effect(surface, handles[0])
        return "ok"

    handles.append(
        surface.mount(PANEL.bind(observations={"read": read}, actions={"poke": lambda v, c: None}))
    )
    return surface


def other(surface: TestSurface) -> RegistrationHandle:
    return surface.mount(OTHER.bind(observations={"read": lambda ctx: "x"}))


async def test_a_pure_observation_returns_its_output() -> None:
    surface = mounted(lambda s, h: None)
    assert await surface.observe("view:probe.panel.read") == "ok"


@pytest.mark.parametrize(
    ("side_effect", "said"),
    [
        (lambda s, h: h.invalidate(), "surface version"),
        (lambda s, h: h.update(availability={"poke": False}), "surface version"),
        (lambda s, h: other(s), "registered"),
        (lambda s, h: h.close(), "unregistered"),
    ],
    ids=["invalidate", "availability", "mount", "unmount"],
)
async def test_an_observation_that_changes_the_surface_fails(
    side_effect: Callable[[TestSurface, RegistrationHandle], None], said: str
) -> None:
    surface = mounted(side_effect)
    with pytest.raises(ImpureObservation, match=said) as caught:
        await surface.observe("view:probe.panel.read")
    assert caught.value.capability_id == "view:probe.panel.read"
    assert caught.value.before.version != caught.value.after.version
    assert isinstance(caught.value, AssertionError)  # fails a test like any assertion


async def test_a_failing_pure_observation_still_reports_its_error() -> None:
    surface = mounted(lambda s, h: None)
    with pytest.raises(InvocationFailed):
        await surface.observe("view:probe.panel.nope")
