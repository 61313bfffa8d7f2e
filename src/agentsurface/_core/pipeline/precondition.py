"""Phase 7, precondition: an action's own check of live state against the validated input."""

from __future__ import annotations

import logging

from ..contracts.context import ReadContext
from ..errors import CapabilityFailure
from ..registrations.entries import ActionEntry
from . import failures
from .call import Call
from .failures import PhaseRefusal
from .invocation import PreconditionFailure

log = logging.getLogger("agentsurface")


def check(call: Call) -> None:
    target = call.target
    entry = target.entry
    if not isinstance(entry, ActionEntry) or entry.binding.precondition is None:
        return
    ctx = ReadContext(entry.capability_id, target.reg.registration_id, call.consumer, call.host)
    try:
        outcome = entry.binding.precondition(call.value, ctx)
    except CapabilityFailure as exc:
        raise PhaseRefusal(exc.error) from None
    except Exception:
        log.exception("precondition of %s raised", entry.capability_id)
        raise PhaseRefusal(failures.precondition_error()) from None
    if isinstance(outcome, PreconditionFailure):
        raise PhaseRefusal(failures.precondition_failed(outcome))
