"""Live registrations (one per mounted component instance) and the tombstones of unmounted ones."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ..contracts import ComponentBinding
from ..records import record
from .entries import CapabilityEntry, build_capabilities

if TYPE_CHECKING:
    from ..contracts.context import CancelSignal
    from ..policies.base import Policy

Status = Literal["active", "rejected", "unregistered"]


@record(frozen=False, eq=False)
class Registration:
    registration_id: str
    binding: ComponentBinding
    registered_at: float
    enabled: bool
    # The ids of the capabilities it holds (what the resolution index and tombstones need).
    capability_ids: frozenset[str]
    # The registry's own policies, first in every entry's chain.
    registry_policies: tuple[Policy, ...] = ()
    status: Status = "active"
    overrides: dict[str, tuple[bool, str | None]] = field(default_factory=dict)
    # Capability id -> entry, built on first read (``capabilities``): a component that mounts
    # and unmounts before any snapshot or call never needs its entries.
    built: dict[str, CapabilityEntry] | None = field(default=None, init=False, repr=False)
    inflight: set[CancelSignal] = field(default_factory=set)
    # Last descriptor built per capability (and for the component), keyed by the volatile
    # inputs (availability, reason, note): an unchanged capability reuses its frozen descriptor.
    descriptors: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    # Availability as last published (for sync_availability: push when() flips as events).
    published: dict[str, bool] = field(default_factory=dict)
    # Snapshot order (priority desc, type, instance id): fixed for a registration, so computed
    # once instead of on every comparison of every sort.
    order: tuple[int, str, str] = (0, "", "")
    # The registry's environment, handed to policies (the environment() gate reads it).
    environment: str | None = None
    # Whether only status, enabled and overrides decide what it shows (no policy votes, no
    # when(), no live note); worked out by the first snapshot that describes it.
    fixed: bool | None = None

    def __post_init__(self) -> None:
        contract = self.binding.contract
        self.order = (-contract.priority, contract.type, self.binding.instance_id)

    @property
    def capabilities(self) -> dict[str, CapabilityEntry]:
        """Capability id -> entry (a ``__getattr__`` would be cheaper to read once, but it slows
        every other attribute read of the class)."""
        entries = self.built
        if entries is None:
            entries = self.built = build_capabilities(self.binding, self.registry_policies)
        return entries

    @property
    def component_type(self) -> str:
        return self.binding.contract.type

    @property
    def instance_id(self) -> str:
        return self.binding.instance_id

    @property
    def key(self) -> tuple[str, str]:
        return (self.binding.contract.type, self.binding.instance_id)

    @property
    def priority(self) -> int:
        return self.binding.contract.priority

    @property
    def origin(self) -> str:
        return self.binding.contract.origin


@record(hot=True)
class Tombstone:
    registration_id: str
    component_type: str
    instance_id: str
    registered_at: float
    unregistered_at: float
    # Which capabilities it held, so a call naming only the capability still learns that its
    # component was unmounted (rather than that the capability never existed).
    capability_ids: frozenset[str] = frozenset()


# A tombstone as kept: the fields of ``Tombstone``, in order. The record is built only when a
# call asks for it (most unmounts are never asked about).
_Kept = tuple[str, str, str, float, float, frozenset[str]]


class Tombstones:
    """Recently unregistered ids, bounded by count and age (identifiers only, no handlers)."""

    __slots__ = ("_items", "_size", "_ttl")

    def __init__(self, size: int, ttl: float) -> None:
        # A plain dict keeps insertion order, and ids are never added twice: oldest first.
        self._items: dict[str, _Kept] = {}
        self._size = size
        self._ttl = ttl

    def add(
        self,
        registration_id: str,
        component_type: str,
        instance_id: str,
        registered_at: float,
        unregistered_at: float,
        capability_ids: frozenset[str],
    ) -> None:
        if self._size <= 0:
            return
        items = self._items
        items.pop(registration_id, None)  # a re-added id moves to the end
        items[registration_id] = (
            registration_id, component_type, instance_id, registered_at, unregistered_at, capability_ids
        )
        if len(items) > self._size:
            del items[next(iter(items))]

    def get(self, registration_id: str, now: float) -> Tombstone | None:
        self.prune(now)
        kept = self._items.get(registration_id)
        return None if kept is None else Tombstone(*kept)

    def holding(self, capability_id: str, instance_id: str | None, now: float) -> Tombstone | None:
        """The most recent live tombstone that held ``capability_id`` (on ``instance_id``)."""
        self.prune(now)
        for kept in reversed(self._items.values()):
            if capability_id in kept[5] and instance_id in (None, kept[2]):
                return Tombstone(*kept)
        return None

    def prune(self, now: float) -> None:
        items = self._items
        while items:
            oldest = next(iter(items.values()))
            if now - oldest[4] <= self._ttl:
                return
            del items[oldest[0]]

    def __len__(self) -> int:
        return len(self._items)
