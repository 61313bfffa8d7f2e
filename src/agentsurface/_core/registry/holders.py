"""The resolution index: for each capability id, the live registrations holding it, in snapshot order."""

from __future__ import annotations

from operator import attrgetter

from ..registrations.registration import Registration

# Snapshot order, read in C (a Python key function was called about 24 times a component).
ORDER = attrgetter("order")


class Holders:
    """Capability id -> live registrations holding it.

    A mount or unmount only adds to or deletes from a dict (kept in mount order); the snapshot
    order a call needs when several registrations hold its capability is sorted when first asked
    for after a change, and kept until the next one. Sorting on every mount instead (bisection
    into a sorted list) cost about a tenth of a mount and unmount."""

    __slots__ = ("_by_instance", "_held", "_sorted")

    def __init__(self) -> None:
        self._held: dict[str, dict[int, Registration]] = {}  # keyed by id(reg): no hashing of reg
        # Made when first asked for (a registry per request may never be):
        # snapshot order, while still true;
        self._sorted: dict[str, list[Registration]] | None = None
        # per capability, instance id -> its sole holder there (None: several), while still true.
        self._by_instance: dict[str, dict[str, Registration | None]] | None = None

    def add(self, reg: Registration) -> None:
        held = self._held
        sorted_ = self._sorted
        by_instance = self._by_instance
        for cid in reg.capability_ids:
            holders = held.get(cid)
            if holders is None:
                held[cid] = {id(reg): reg}
            else:
                holders[id(reg)] = reg
                if sorted_:
                    sorted_.pop(cid, None)
                if by_instance:
                    by_instance.pop(cid, None)

    def remove(self, reg: Registration) -> None:
        held = self._held
        sorted_ = self._sorted
        by_instance = self._by_instance
        for cid in reg.capability_ids:
            holders = held.get(cid)
            if holders is not None and holders.pop(id(reg), None) is not None:
                if not holders:
                    del held[cid]
                if sorted_:
                    sorted_.pop(cid, None)
                if by_instance:
                    by_instance.pop(cid, None)

    def sole(self, capability_id: str) -> Registration | None:
        """The live registration holding ``capability_id`` if it is the only one (no copy)."""
        holders = self._held.get(capability_id)
        if holders is None or len(holders) != 1:
            return None
        for reg in holders.values():
            return reg
        return None

    def sole_at(self, capability_id: str, instance_id: str) -> Registration | None:
        """The live registration holding ``capability_id`` on ``instance_id`` if it is the only
        one there (the common call when several instances of a type are mounted)."""
        by_instance = self._by_instance
        if by_instance is None:
            by_instance = self._by_instance = {}
        index = by_instance.get(capability_id)
        if index is None:
            holders = self._held.get(capability_id)
            if holders is None:
                return None
            index = {}
            for reg in holders.values():
                instance = reg.binding.instance_id
                index[instance] = None if instance in index else reg
            by_instance[capability_id] = index
        return index.get(instance_id)

    def holding(self, capability_id: str) -> list[Registration]:
        """A copy, in snapshot order: callers may keep it while registrations come and go."""
        sorted_ = self._sorted
        if sorted_ is None:
            sorted_ = self._sorted = {}
        in_order = sorted_.get(capability_id)
        if in_order is None:
            holders = self._held.get(capability_id)
            if holders is None:
                return []
            in_order = sorted_[capability_id] = sorted(holders.values(), key=ORDER)
        return list(in_order)

    def clear(self) -> None:
        self._held.clear()
        self._sorted = self._by_instance = None


__all__ = ["ORDER", "Holders"]
