"""The server's background upkeep, off every request's path and one run at a time: the refusals
held back by sampling written to the audit, invocation records past the retention dropped,
expired approval challenges dropped, and idle rate-limit buckets forgotten."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from .stores import InvocationStore
from .throttle import RefusalSampler

AuditHook = Callable[[Any, Any], None]
"""The server's ``audit(record, db)`` hook."""


class RetentionLimits(Protocol):
    """What upkeep reads of ``ServerLimits``."""

    @property
    def prune_every(self) -> float: ...

    @property
    def retention(self) -> timedelta | None: ...

log = logging.getLogger("agentsurface.server")


class Upkeep:
    """Started by requests when due (``maybe_start``), run in a daemon thread."""

    def __init__(
        self,
        store: InvocationStore,
        audit: AuditHook | None,
        sampler: RefusalSampler,
        limits: RetentionLimits,
        clock: Callable[[], datetime],
    ) -> None:
        self.store = store
        self._audit = audit
        self._sampler = sampler
        self._limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        self._next = 0.0

    def maybe_start(self) -> None:
        """Start a background run when one is due (never waits)."""
        now = time.monotonic()
        if now < self._next or not self._lock.acquire(blocking=False):
            return
        self._next = now + self._limits.prune_every
        retention = self._limits.retention
        cutoff = None if retention is None else self._clock() - retention
        threading.Thread(target=self._run, args=(cutoff,), name="agentsurface-prune", daemon=True).start()

    def flush_refusals(self) -> int:
        """Audit the refusals held back by sampling now, one record per caller and code (the
        background run does this every ``prune_every`` seconds). Returns how many records."""
        audit = self._audit
        records = self._sampler.drain()
        if audit is None or not records:
            return 0

        def write(db: Any) -> None:
            for record in records:
                audit(record, db)

        self.store.run(write)
        return len(records)

    def _run(self, cutoff: datetime | None) -> None:
        try:
            self.flush_refusals()
            if cutoff is not None:
                dropped = self.store.forget_before(cutoff)
                if dropped:
                    log.info("dropped %d invocation records older than %s", dropped, cutoff.isoformat())
            self.forget_challenges()
            self.store.forget_idle_buckets(3600.0)
        except Exception:
            log.warning("background upkeep failed (prune, refusal counts)", exc_info=True)
        finally:
            self._lock.release()

    def forget_challenges(self) -> int:
        """Drop approval challenges past their expiry (they can never be spent any more)."""
        dropped = int(self.store.forget_challenges_before(self._clock()))
        if dropped:
            log.info("dropped %d expired approval challenges", dropped)
        return dropped

    def prune_now(self) -> int:
        """Drop the invocation records past the retention now (returns how many)."""
        retention = self._limits.retention
        if retention is None:
            return 0
        return int(self.store.forget_before(self._clock() - retention))
