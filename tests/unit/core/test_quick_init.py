"""quick_init: a frozen dataclass built through ``__dict__`` behaves as the dataclass's own ``__init__``."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field

import pytest

from agentsurface._core.audit import AuditEvent
from agentsurface._core.quick_init import derived, quick_init
from agentsurface._core.registrations.registration import Tombstone


def _pair() -> tuple[type, type]:
    def make() -> type:
        @dataclass(frozen=True)
        class Sample:
            a: int
            b: str = "b"
            c: list[int] = field(default_factory=list)
            d: int = field(default=4, init=False)
            e: tuple[int, ...] = field(default=(), kw_only=True)
            f: dict[str, int] = field(default_factory=dict, kw_only=True)
            g: int = field(default=0, repr=False)

            def __post_init__(self) -> None:
                object.__setattr__(self, "g", self.g + 1)

        return Sample

    return make(), quick_init(make())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {}),
        ((1, "x"), {}),
        ((1, "x", [3]), {"e": (5,), "f": {"k": 1}, "g": 7}),
        ((), {"a": 2, "c": [1, 2], "b": "y"}),
    ],
)
def test_same_values_as_the_dataclass_init(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    plain, quick = _pair()
    expected, got = plain(*args, **kwargs), quick(*args, **kwargs)
    assert dataclasses.asdict(got) == dataclasses.asdict(expected)
    assert repr(got).split("(", 1)[1] == repr(expected).split("(", 1)[1]
    assert got.d == 4  # init=False keeps its default


def test_same_signature_and_refusals() -> None:
    plain, quick = _pair()
    assert str(inspect.signature(quick)) == str(inspect.signature(plain))
    bad: list[tuple[tuple[object, ...], dict[str, object]]] = [
        ((), {}),
        ((1,), {"zzz": 1}),
        ((1, "x", [], 9, 10), {}),
        ((1,), {"d": 5}),
    ]
    for bad_args, bad_kwargs in bad:
        with pytest.raises(TypeError):
            plain(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError):
            quick(*bad_args, **bad_kwargs)


def test_defaults_made_by_factories_are_not_shared() -> None:
    _, quick = _pair()
    first, second = quick(1), quick(2)
    assert first.c == [] and first.c is not second.c and first.f is not second.f


def test_still_frozen() -> None:
    _, quick = _pair()
    item = quick(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del item.b


def test_library_records_keep_their_dataclass_behaviour() -> None:
    event = AuditEvent(
        at="2026-01-01T00:00:00.000Z", type="registration", registration_id="reg_1", detail="t@i"
    )
    assert event.to_json() == {
        "at": "2026-01-01T00:00:00.000Z",
        "type": "registration",
        "registration_id": "reg_1",
        "detail": "t@i",
    }
    assert event == AuditEvent(
        "2026-01-01T00:00:00.000Z", "registration", registration_id="reg_1", detail="t@i"
    )
    assert hash(event) == hash(dataclasses.replace(event))
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.type = "x"  # type: ignore[misc]
    tomb = Tombstone("reg_1", "t", "i", 1.0, 2.0)
    assert tomb.capability_ids == frozenset()


def test_refuses_what_it_cannot_speed_up() -> None:
    @dataclass
    class Mutable:
        a: int

    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    class NotADataclass:
        pass

    for cls in (Mutable, Slotted, NotADataclass):
        with pytest.raises(TypeError):
            quick_init(cls)


def test_a_derived_value_is_computed_once_and_the_instance_stays_frozen() -> None:
    computed: list[int] = []

    @quick_init
    @dataclass(frozen=True)
    class Entry:
        base: int

        @derived
        def doubled(self) -> int:
            computed.append(self.base)
            return self.base * 2

    entry = Entry(21)
    assert isinstance(Entry.doubled, derived)
    assert (entry.doubled, entry.doubled, computed) == (42, 42, [21])  # read twice, computed once
    assert Entry(1).doubled == 2 and computed == [21, 1]  # per instance
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.doubled = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.base = 3  # type: ignore[misc]


def test_the_entries_derived_values_are_their_contracts() -> None:
    """Capability entries read their contract's values once; what they answer is unchanged."""
    from agentsurface._core.registrations.entries import ActionEntry, build_capabilities
    from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

    contract = ComponentContract(
        type="t.widget",
        description="a widget",
        observations={"peek": ObservationContract("look", output={"type": "object"})},
        actions={"go": ActionContract("go", effect="navigation", confirmation="required", audit="full")},
    )
    binding = contract.bind(observations={"peek": lambda ctx: {}}, actions={"go": lambda value, ctx: None})
    entries = build_capabilities(binding, ())
    go, peek = entries["view:t.widget.go"], entries["view:t.widget.peek"]
    assert isinstance(go, ActionEntry)
    assert (go.effect, go.navigation, go.confirmation, go.audit, go.description) == (
        "navigation", True, "required", "full", "go",
    )
    assert peek.output is contract.observations["peek"].output and peek.when is None
