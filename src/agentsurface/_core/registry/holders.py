"""The resolution index: for each capability id, the live registrations holding it, in snapshot order."""

from __future__ import annotations

from bisect import bisect_left, insort
from operator import attrgetter

from ..registrations.registration import Registration

# Snapshot order, read in C: holder lists are bisected on every mount and unmount, and a
# Python key function was called about 24 times a component.
ORDER = attrgetter("order")


class Holders:
    """Capability id -> live registrations holding it, kept sorted as they come and go."""

    __slots__ = ("_lists",)

    def __init__(self) -> None:
        self._lists: dict[str, list[Registration]] = {}

    def add(self, reg: Registration) -> None:
        lists = self._lists
        for cid in reg.capabilities:
            holders = lists.get(cid)
            if holders is None:  # the first holder starts the list: nothing to bisect
                lists[cid] = [reg]
            else:
                insort(holders, reg, key=ORDER)

    def remove(self, reg: Registration) -> None:
        lists = self._lists
        for cid in reg.capabilities:
            holders = lists.get(cid)
            if holders is not None:
                _remove_sorted(holders, reg)
                if not holders:
                    del lists[cid]

    def sole(self, capability_id: str) -> Registration | None:
        """The live registration holding ``capability_id`` if it is the only one (no copy)."""
        holders = self._lists.get(capability_id)
        return holders[0] if holders is not None and len(holders) == 1 else None

    def holding(self, capability_id: str) -> list[Registration]:
        """A copy: callers may keep it while registrations come and go."""
        return list(self._lists.get(capability_id, ()))

    def clear(self) -> None:
        self._lists.clear()


def _remove_sorted(holders: list[Registration], reg: Registration) -> None:
    """Remove ``reg`` from a list kept in snapshot order: found by bisection (``list.remove``
    would compare it with every holder before it, a thousand at a thousand mounts)."""
    at = bisect_left(holders, reg.order, key=ORDER)
    while at < len(holders) and holders[at].order == reg.order:
        if holders[at] is reg:
            del holders[at]
            return
        at += 1
    holders.remove(reg)  # not where its order says (never expected): the slow way


__all__ = ["ORDER", "Holders"]
