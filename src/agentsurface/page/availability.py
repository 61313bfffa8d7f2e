"""Availability that follows state: one re-evaluation of ``when()`` and of ``describe()`` notes,
published to consumers only when something an agent would see changed."""

from __future__ import annotations

import time
from collections.abc import Callable

from agentsurface import AgentSurfaceRegistry, Consumer

# What an agent sees of the capabilities' live state: (id, available, reason, note), in order.
Fingerprint = tuple[tuple[str, bool, str | None, str | None], ...]


class AvailabilityFollower:
    """Re-evaluates a registry's availability and notes; ``reevaluate()`` is the unit of work
    the page surface coalesces.

    ``sync_availability()`` publishes ``when()`` flips (a version bump the adapters follow). A
    reason or ``describe()`` note can change while availability does not: then ``bump`` is
    called (the page surface invalidates one of its registrations) so consumers re-read the
    descriptions. ``runs`` and ``seconds`` give the cost."""

    def __init__(
        self,
        registry: AgentSurfaceRegistry,
        bump: Callable[[], bool],
        consumer: Consumer | None = None,
    ) -> None:
        self._registry = registry
        self._bump = bump
        self._consumer = consumer
        self._last: Fingerprint | None = None
        self.runs = 0
        self.seconds = 0.0

    def reevaluate(self) -> None:
        registry = self._registry
        if registry.closed:
            return
        started = time.perf_counter()
        before = registry.revision
        registry.sync_availability()
        seen = self.fingerprint()
        if self._last is not None and seen != self._last and registry.revision == before:
            self._bump()
        self._last = seen
        self.runs += 1
        self.seconds += time.perf_counter() - started

    def fingerprint(self) -> Fingerprint:
        snapshot = self._registry.snapshot(consumer=self._consumer, include_unavailable=True)
        return tuple(
            (cap.capability_id, cap.available, cap.unavailable_reason, getattr(cap, "contextual_note", None))
            for cap in snapshot.capabilities()
        )
