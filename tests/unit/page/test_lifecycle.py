"""Components bound to the page (CPython, fake DOM): registered while the element is in the
document, unregistered when it leaves, re-registered when its instance id changes; code-scoped
mounts; closing the page surface."""

from __future__ import annotations

import pytest

from agentsurface import DefinitionError
from agentsurface.page import INSTANCE_ATTRIBUTE, PageSurface, page_surface

from .fake_dom import FakeDom, FakeElement
from .surface import Board, BoardState, make_registry


def instances(surface: PageSurface) -> list[str]:
    snap = surface.registry.snapshot()
    return sorted(component.instance_id for component in snap.components)


@pytest.fixture
def dom() -> FakeDom:
    return FakeDom()


def test_registered_while_the_element_is_in_the_document(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement()
    attachment = surface.attach(Board(BoardState()), element)
    assert attachment.status == "pending" and instances(surface) == []
    dom.insert(element)
    dom.deliver_mutations()
    assert attachment.status == "registered" and instances(surface) == ["default"]
    dom.remove(element)
    dom.deliver_mutations()
    assert attachment.status == "detached" and instances(surface) == []
    assert surface.attachments == [] and attachment.element is None  # nothing kept


def test_a_move_within_one_mutation_batch_keeps_the_registration(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement()
    dom.insert(element)
    attachment = surface.attach(Board(BoardState()), element)
    registration = attachment.handle
    dom.remove(element)
    dom.insert(element)  # moved: removed and added before the observer ran
    dom.deliver_mutations()
    assert attachment.handle is registration and attachment.status == "registered"


def test_the_instance_attribute_names_the_instance_and_a_change_re_registers(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement(attributes={INSTANCE_ATTRIBUTE: "left"})
    dom.insert(element)
    attachment = surface.attach(Board(BoardState()), element)
    first = attachment.handle
    assert instances(surface) == ["left"]
    dom.set_attribute(element, INSTANCE_ATTRIBUTE, "right")
    dom.deliver_mutations()
    assert instances(surface) == ["right"] and attachment.instance_id == "right"
    assert first is not None and first.status == "unregistered"


def test_an_invalid_instance_id_from_the_page_is_a_rejection_not_an_exception(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement(attributes={INSTANCE_ATTRIBUTE: "ok"})
    dom.insert(element)
    attachment = surface.attach(Board(BoardState()), element)
    dom.set_attribute(element, INSTANCE_ATTRIBUTE, "bad id with spaces")
    dom.deliver_mutations()  # must not raise inside the observer callback
    assert attachment.status == "rejected" and attachment.error and instances(surface) == []
    dom.set_attribute(element, INSTANCE_ATTRIBUTE, "fixed")
    dom.deliver_mutations()
    assert attachment.status == "registered" and instances(surface) == ["fixed"]


def test_attach_raises_for_an_invalid_id_given_directly(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement(attributes={INSTANCE_ATTRIBUTE: "not valid!"})
    dom.insert(element)
    with pytest.raises(DefinitionError):
        surface.attach(Board(BoardState()), element)
    assert surface.attachments == []


def test_a_duplicate_instance_is_rejected_and_the_other_keeps_it(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    one, two = FakeElement(), FakeElement()
    dom.insert(one)
    dom.insert(two)
    first = surface.attach(Board(BoardState()), one)
    second = surface.attach(Board(BoardState()), two)
    assert first.status == "registered" and second.status == "rejected"
    dom.remove(two)
    dom.deliver_mutations()
    assert second.status == "detached" and first.status == "registered"


def test_detach_is_idempotent_and_a_context_manager(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement()
    dom.insert(element)
    with surface.attach(Board(BoardState()), element) as attachment:
        assert instances(surface) == ["default"]
    assert attachment.status == "detached" and instances(surface) == []
    attachment.close()
    dom.deliver_mutations()
    assert instances(surface) == []


def test_mount_scopes_a_component_to_a_with_block() -> None:
    surface = PageSurface(make_registry(), dom=None)
    with surface.mount(Board(BoardState())) as attachment:
        assert attachment.status == "registered" and instances(surface) == ["default"]
    assert instances(surface) == []


async def test_mount_scopes_a_component_to_an_async_with_block() -> None:
    surface = PageSurface(make_registry(), dom=None)
    async with surface.mount(Board(BoardState())):
        assert instances(surface) == ["default"]
    assert instances(surface) == []


def test_attach_without_a_dom_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="DOM"):
        PageSurface(make_registry(), dom=None).attach(Board(BoardState()), FakeElement())


def test_close_detaches_everything_and_stops_following_the_page(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    element = FakeElement()
    dom.insert(element)
    surface.attach(Board(BoardState()), element)
    assert len(dom.observers) == 1 and len(dom.listeners) == 1
    surface.close()
    surface.close()
    assert instances(surface) == [] and dom.observers == [] and dom.listeners == []
    assert not dom.closed  # a DOM the app passed in is the app's to close
    with pytest.raises(RuntimeError, match="closed"):
        surface.attach(Board(BoardState()), element)


def test_one_observer_for_any_number_of_attachments(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    elements = [FakeElement(attributes={INSTANCE_ATTRIBUTE: f"b{i}"}) for i in range(50)]
    for element in elements:
        dom.insert(element)
        surface.attach(Board(BoardState()), element)
    assert len(dom.observers) == 1 and len(instances(surface)) == 50
    for element in elements:
        dom.remove(element)
    dom.deliver_mutations()
    assert instances(surface) == [] and surface.attachments == []


def test_a_thousand_cycles_leave_nothing_behind(dom: FakeDom) -> None:
    surface = PageSurface(make_registry(), dom=dom)
    for _ in range(1000):
        element = FakeElement()
        dom.insert(element)
        surface.attach(Board(BoardState()), element)
        dom.remove(element)
        dom.deliver_mutations()
    assert surface.attachments == [] and instances(surface) == []
    assert surface.registry.registrations() == []


def test_page_surface_is_one_per_registry(dom: FakeDom) -> None:
    registry = make_registry()
    first = page_surface(registry, dom=dom)
    assert page_surface(registry) is first
    first.close()
    assert page_surface(registry, dom=dom) is not first
