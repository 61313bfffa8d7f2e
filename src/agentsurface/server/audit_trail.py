"""The procedure server's audit trail: the record of every call (applied, replayed or refused)
handed to the app's ``audit`` hook, inside the call's transaction or in one of its own."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool

from ..bridge.wire import error_body
from .config import Audit, CallRecord
from .errors import Refusal
from .procedures import Caller, ConfirmationEvidence
from .stores import InvocationStore, Outcome
from .throttle import RefusalSampler

log = logging.getLogger("agentsurface.server")


class AuditedCall(Protocol):
    """What the trail reads of a call on its way through the server's steps."""

    procedure_id: str
    caller: Caller | None
    invocation_id: str | None
    input: str | None
    confirmation: ConfirmationEvidence | None
    limit_key: str


class AuditTrail:
    """Writes each call's ``CallRecord`` through the app's hook (a no-op without one)."""

    def __init__(
        self,
        audit: Audit | None,
        store: InvocationStore,
        sampler: RefusalSampler,
        clock: Callable[[], datetime],
    ) -> None:
        self._audit = audit
        self._store = store
        self._sampler = sampler
        self._clock = clock

    def record(self, call: AuditedCall, outcome: Outcome, *, replayed: bool = False) -> CallRecord:
        error = outcome.body.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        details = error.get("details") if isinstance(error, dict) else None
        reason = details.get("reason") if isinstance(details, dict) else None
        return CallRecord(
            at=self._clock(),
            procedure_id=call.procedure_id,
            caller=call.caller,
            invocation_id=call.invocation_id,
            outcome=str(code) if code else "ok",
            status=outcome.status,
            replayed=replayed,
            input=call.input,
            confirmation_id=call.confirmation.id if call.confirmation else None,
            reason=reason if isinstance(reason, str) else None,
        )

    def within(self, call: AuditedCall, outcome: Outcome, db: Any) -> None:
        """Audit an applied call inside its own transaction: a failure here undoes the call."""
        if self._audit is not None:
            self._audit(self.record(call, outcome), db)

    async def refusal(self, call: AuditedCall, refusal: Refusal) -> None:
        if self._audit is None:
            return
        outcome = Outcome(refusal.status, error_body(refusal.error), keep=False, record=False)
        record: CallRecord | None = self.record(call, outcome)
        if refusal.error.code in RefusalSampler.CODES:
            # Unknown and over-budget callers arrive at wire speed: not one audit row (one
            # database write) each, but one per caller, code and window, counting the rest.
            record = self._sampler.admit(refusal.error.code, call.limit_key, time.monotonic(), record)
        if record is not None:
            await self._outside(record)

    async def replay(self, call: AuditedCall, outcome: Outcome) -> None:
        await self._outside(self.record(call, outcome, replayed=True))

    async def _outside(self, record: CallRecord) -> None:
        audit = self._audit
        if audit is None:
            return
        try:
            await run_in_threadpool(self._store.run, lambda db: audit(record, db))
        except Exception:
            log.exception("could not audit a call to %s", record.procedure_id)
