"""records.record: one decorator picks how a record is built from what it needs (frozen or not,
hot or not), and each strategy behaves as the dataclass it stands for."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import weakref
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentsurface._core.audit import AuditEvent
from agentsurface._core.records import derived, record, strategy_of
from agentsurface._core.registrations.registration import Tombstone


def _pair() -> tuple[type, type]:
    def make() -> type:
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

    return dataclass(frozen=True)(make()), record(hot=True)(make())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {}),
        ((1, "x"), {}),
        ((1, "x", [3]), {"e": (5,), "f": {"k": 1}, "g": 7}),
        ((), {"a": 2, "c": [1, 2], "b": "y"}),
    ],
)
def test_a_hot_record_gets_the_values_the_dataclass_init_gives(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    plain, quick = _pair()
    expected, got = plain(*args, **kwargs), quick(*args, **kwargs)
    assert dataclasses.asdict(got) == dataclasses.asdict(expected)
    assert repr(got).split("(", 1)[1] == repr(expected).split("(", 1)[1]
    assert got.d == 4  # init=False keeps its default


def test_a_hot_record_has_the_same_signature_and_refusals() -> None:
    plain, quick = _pair()
    assert str(inspect.signature(quick)) == str(inspect.signature(plain))
    assert quick.__init__.__qualname__ == plain.__init__.__qualname__
    assert quick.__init__.__code__ is not plain.__init__.__code__  # not dataclasses' own __init__
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


def test_a_hot_record_is_still_frozen() -> None:
    _, quick = _pair()
    item = quick(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del item.b


@record
class Frozen:
    x: int
    y: str = "y"


@record(hot=True)
class Hot:
    x: int
    y: str = "y"


@record(frozen=False)
class Mutable:
    x: int
    y: str = "y"


def test_each_need_picks_its_strategy() -> None:
    assert strategy_of(Frozen) == "frozen slots"
    assert strategy_of(Hot) == "frozen dict + fast init"
    assert strategy_of(Mutable) == "mutable slots"
    assert "__slots__" in vars(Frozen) and not hasattr(Frozen(1), "__dict__")
    assert "__slots__" not in vars(Hot) and Hot(1).__dict__ == {"x": 1, "y": "y"}
    assert "__slots__" in vars(Mutable) and not hasattr(Mutable(1), "__dict__")


def test_frozen_by_default_and_mutable_when_asked() -> None:
    for cls in (Frozen, Hot):
        item: Any = cls(1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            item.x = 2
        # No stray attributes either (a frozen slots dataclass of 3.11 says so with a TypeError).
        with pytest.raises((AttributeError, TypeError)):
            item.z = 2
        assert item == cls(1) and hash(item) == hash(cls(1))
    changing = Mutable(1)
    changing.x = 2
    assert changing == Mutable(2)
    with pytest.raises(AttributeError):
        changing.z = 3  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(changing)  # mutable and compared by value: unhashable, as dataclasses makes it


def test_eq_order_and_weakref_are_the_dataclass_options() -> None:
    @record(eq=False)
    class ByIdentity:
        x: int

    @record(order=True)
    class Ordered:
        x: int

    @record(eq=False, weakref=True)
    class Weak:
        x: int

    @record(frozen=False, eq=False, weakref=True)
    class WeakMutable:
        x: int

    assert ByIdentity(1) != ByIdentity(1)
    assert sorted([Ordered(2), Ordered(1)]) == [Ordered(1), Ordered(2)]
    for cls in (Weak, WeakMutable, Hot):
        item = cls(1)
        assert weakref.ref(item)() is item
    with pytest.raises(TypeError):
        weakref.ref(Frozen(1))  # slots without weakref=True: no weak references


def test_records_pickle_and_replace_as_dataclasses_do() -> None:
    for item in (Frozen(1, "a"), Hot(1, "a"), Mutable(1, "a")):
        assert pickle.loads(pickle.dumps(item)) == item
        assert dataclasses.replace(item, y="b") == type(item)(1, "b")


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
    assert strategy_of(AuditEvent) == strategy_of(Tombstone) == "frozen dict + fast init"


def test_refuses_what_it_cannot_build() -> None:
    with pytest.raises(TypeError, match="InitVar"):

        @record(hot=True)
        class WithInitVar:
            a: dataclasses.InitVar[int]

    for options in ({}, {"frozen": False}):
        with pytest.raises(TypeError, match="derived value needs a frozen hot record"):

            @record(**options)
            class SlotsWithDerived:
                a: int

                @derived
                def twice(self) -> int:
                    return self.a * 2


def test_a_class_record_did_not_make_has_no_strategy() -> None:
    @dataclass(frozen=True, slots=True)
    class Plain:
        a: int

    class Sub(Frozen):
        pass

    assert strategy_of(Plain) is None and strategy_of(Sub) is None and strategy_of(int) is None


def test_a_derived_value_is_computed_once_and_the_instance_stays_frozen() -> None:
    computed: list[int] = []

    @record(hot=True)
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
    assert not binding.any_when
    go, peek = entries["view:t.widget.go"], entries["view:t.widget.peek"]
    assert isinstance(go, ActionEntry)
    assert (go.effect, go.navigation, go.confirmation, go.audit, go.description) == (
        "navigation", True, "required", "full", "go",
    )
    assert peek.output is contract.observations["peek"].output and peek.when is None
