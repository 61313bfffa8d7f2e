"""The pipeline's state for one registry: dedupe cache, queues, confirmations, executor, and
the signals of the calls executing now."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ..audit import AuditEvent, AuditSink
from ..clock import iso
from ..contracts.context import ActionContext, CancelSignal
from ..events import EventBus
from ..ids import random_id
from ..jsonvalue import JsonValue
from .confirmation import ConfirmationController
from .dedupe import DedupeCache
from .queues import ActionQueues, ObservationAdmission
from .registry_view import RegistryView

log = logging.getLogger("agentsurface")

ProcedureExecutor = Callable[[str, JsonValue, ActionContext], Awaitable[JsonValue] | JsonValue]


class Pipeline:
    """Runs invocations for one registry (created on its first use)."""

    def __init__(
        self, registry: RegistryView, events: EventBus, audit: AuditSink, executor: ProcedureExecutor | None
    ) -> None:
        self.registry = registry
        # Phases build an event only when ``events.wants(type)``: most registries have no
        # listener, and a WebMCP adapter's takes surface changes only.
        self.events = events
        self.emit = emit = events.emit
        self.audit_sink = audit
        limits = registry.limits
        self.dedupe = DedupeCache(limits.dedupe_cache_size, limits.dedupe_cache_ttl, registry.now)
        self.actions = ActionQueues()
        self.observations = ObservationAdmission(
            limits.max_concurrent_observations_per_consumer,
            limits.max_concurrent_observations_total,
            limits.max_queued_observations_per_consumer,
        )
        self.confirmations = ConfirmationController(
            clock=registry.clock,
            ttl=limits.confirmation_ttl,
            max_pending=limits.max_pending_confirmations,
            new_id=lambda: random_id("cnf_", 16),
            emit=emit,
            audit=self.audit,
        )
        # The host's, for ``domain:`` procedures: fixed with the registry (registrations rely on it).
        self.executor: Final = executor
        self.active: set[CancelSignal] = set()

    def audit(self, type_: str, **fields: Any) -> None:
        """Record an audit event of this pipeline now."""
        self.record(AuditEvent(at=iso(self.registry.now()), type=type_, **fields))

    def record(self, event: AuditEvent) -> None:
        try:
            self.audit_sink.record(event)
        except Exception:
            log.exception("audit sink failed")

    def close(self) -> None:
        for signal in list(self.active):
            signal.abort("disposed")
        self.actions.cancel_all()
        self.observations.cancel_all()
        self.confirmations.expire_all()
