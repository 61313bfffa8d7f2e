"""The resolution index: for each capability id, the live registrations holding it, in snapshot order."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from ..registrations.registration import Registration

# Snapshot order, read in C (a Python key function was called about 24 times a component).
ORDER = attrgetter("order")


class Holders:
    """Capability id -> live registrations holding it.

    A mount or unmount only adds to or deletes from a dict (kept in mount order); the snapshot
    order a call needs when several registrations hold its capability is sorted when first asked
    for after a change, and kept until the next one. Sorting on every mount instead (bisection
    into a sorted list) cost about a tenth of a mount and unmount."""

    __slots__ = ("_held", "_views")

    def __init__(self) -> None:
        self._held: dict[str, dict[int, Registration]] = {}  # keyed by id(reg): no hashing of reg
        # Views of a capability's holders, derived when first asked for after a change to them
        # (one list per capability: [snapshot order, instance id -> its sole holder there (None:
        # several)]); the dict itself is made when first needed (a registry per request may
        # never need it).
        self._views: dict[str, list[Any]] | None = None

    def add(self, reg: Registration) -> None:
        held = self._held
        views = self._views
        for cid in reg.capability_ids:
            holders = held.get(cid)
            if holders is None:
                held[cid] = {id(reg): reg}
            else:
                holders[id(reg)] = reg
                if views:
                    views.pop(cid, None)

    def remove(self, reg: Registration) -> None:
        held = self._held
        views = self._views
        for cid in reg.capability_ids:
            holders = held.get(cid)
            if holders is not None and holders.pop(id(reg), None) is not None:
                if not holders:
                    del held[cid]
                if views:
                    views.pop(cid, None)

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
        view = self._view(capability_id)
        if view is None:
            return None
        index: dict[str, Registration | None] | None = view[1]
        if index is None:
            index = view[1] = {}
            for reg in self._held[capability_id].values():
                instance = reg.binding.instance_id
                index[instance] = None if instance in index else reg
        return index.get(instance_id)

    def holding(self, capability_id: str) -> list[Registration]:
        """A copy, in snapshot order: callers may keep it while registrations come and go."""
        view = self._view(capability_id)
        if view is None:
            return []
        in_order: list[Registration] | None = view[0]
        if in_order is None:
            in_order = view[0] = sorted(self._held[capability_id].values(), key=ORDER)
        return list(in_order)

    def _view(self, capability_id: str) -> list[Any] | None:
        """The derived views of ``capability_id``'s holders (None when nobody holds it)."""
        views = self._views
        if views is None:
            views = self._views = {}
        view = views.get(capability_id)
        if view is None:
            if capability_id not in self._held:
                return None
            view = views[capability_id] = [None, None]
        return view

    def clear(self) -> None:
        self._held.clear()
        self._views = None


__all__ = ["ORDER", "Holders"]
