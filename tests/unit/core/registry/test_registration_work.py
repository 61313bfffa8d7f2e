"""What a registration does when it mounts, and what it leaves for later.

A registration's capability entries are built when first read (a snapshot, a call, explain),
not at mount: a component that mounts and unmounts unseen never builds them. Its ids, its
first publication and its tombstone come without them.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentsurface._core.registrations.entries import ActionEntry, ObservationEntry
from agentsurface.lowlevel import ActionBinding, ComponentContract, ObservationBinding
from tests.support import bind_devices, devices_contract, disable_procedure, registry_for

IDS = {
    "view:devices.table.visibleRows",
    "view:devices.table.selectRows",
    "view:devices.table.clearSelection",
}


def test_a_registration_unmounted_unseen_never_builds_its_entries() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    handle = registry.register(bind_devices(contract))
    reg = registry.registration(handle.registration_id)
    assert reg is not None and reg.built is None
    assert reg.capability_ids == IDS
    handle.close()
    assert reg.built is None
    tomb = registry.tombstone(handle.registration_id)
    assert tomb is not None and tomb.capability_ids == IDS


def test_the_entries_are_built_once_when_first_read() -> None:
    contract = devices_contract()
    registry = registry_for([contract])
    handle = registry.register(bind_devices(contract))
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    registry.snapshot()
    entries = reg.built
    assert entries is not None and set(entries) == IDS
    assert isinstance(entries["view:devices.table.visibleRows"], ObservationEntry)
    assert isinstance(entries["view:devices.table.selectRows"], ActionEntry)
    assert reg.capabilities is entries  # not built again


def test_a_registration_holds_the_procedures_it_references() -> None:
    contract, proc = devices_contract(), disable_procedure()
    registry = registry_for([contract, proc])
    handle = registry.register(bind_devices(contract, procedures=[proc.reference()]))
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    assert reg.capability_ids == {*IDS, "domain:devices.disable"}
    assert set(reg.capabilities) == reg.capability_ids


def _when_in_observation(contract: ComponentContract) -> Any:
    return contract.bind(
        observations={"visibleRows": ObservationBinding(lambda ctx: {"rows": []}, when=lambda: False)},
        actions={"selectRows": lambda value, ctx: None, "clearSelection": lambda value, ctx: None},
    )


def _when_in_action(contract: ComponentContract) -> Any:
    return bind_devices(contract, when_clear=lambda: False)


def _no_when(contract: ComponentContract) -> Any:
    return contract.bind(
        observations={"visibleRows": lambda ctx: {"rows": []}},
        actions={
            "selectRows": ActionBinding(lambda value, ctx: None, unavailable_reason="later"),
            "clearSelection": lambda value, ctx: None,
        },
    )


def _when_in_reference(contract: ComponentContract) -> Any:
    return contract.bind(
        observations={"visibleRows": lambda ctx: {"rows": []}},
        actions={"selectRows": lambda value, ctx: None, "clearSelection": lambda value, ctx: None},
        procedures=[disable_procedure().reference(when=lambda: False)],
    )


@pytest.mark.parametrize(
    ("make", "expected"),
    [(_no_when, False), (_when_in_observation, True), (_when_in_action, True), (_when_in_reference, True)],
)
def test_bind_knows_whether_any_capability_has_a_when(make: Any, expected: bool) -> None:
    binding = make(devices_contract())
    assert binding.any_when is expected
    del binding.__dict__["any_when"]  # what bind() filled in is what the binding computes
    assert binding.any_when is expected


def test_a_when_decides_the_first_publication() -> None:
    contract, proc = devices_contract(), disable_procedure()
    registry = registry_for([contract, proc])
    handle = registry.register(_when_in_reference(contract))
    reg = registry.registration(handle.registration_id)
    assert reg is not None
    assert reg.published == {**dict.fromkeys(IDS, True), "domain:devices.disable": False}
    assert reg.built is not None  # the when() was asked through the entries


def test_registration_ids_never_repeat_and_name_their_registry() -> None:
    """A counter and characters drawn once per registry: unique within it, and an id kept from
    another registry (an earlier page load) matches nothing here."""
    contract = devices_contract()
    first, second = registry_for([contract]), registry_for([contract])
    ids = []
    for index in range(3):
        handle = first.register(bind_devices(contract, instance_id=f"i{index}"))
        ids.append(handle.registration_id)
        handle.close()
    ids.append(first.register(bind_devices(contract, instance_id="i0")).registration_id)
    assert len(set(ids)) == 4
    assert all(re.fullmatch(r"reg_[0-9a-f]{6}[0-9A-Za-z]{8}", rid) for rid in ids)
    other = second.register(bind_devices(contract, instance_id="i0")).registration_id
    assert other not in ids and other[-8:] != ids[0][-8:]
