"""Previews in the pipeline: computed in phase 6 when a call asks for the person's approval
(the dialog shows it, the approval is bound to its digest), and checked again in phase 9, in the
same step as the handler's start, so that nothing the person did not see is ever applied.

A preview function is the app's: it may raise (the call is refused, nothing is shown or
applied) or return something that is not a preview (refused too); each is logged and audited
as ``preview-failed``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from ..contracts.context import ReadContext
from ..errors import CapabilityFailure
from ..jsonvalue import digest, to_json_value
from ..preview import Preview, PreviewRefused, make_preview
from ..registrations.entries import ActionEntry, CapabilityEntry, ProcedureEntry
from . import failures
from .call import Call, CallTarget
from .confirmation import Freshness
from .failures import PhaseRefusal

log = logging.getLogger("agentsurface")


def declared(entry: CapabilityEntry) -> Callable[..., Any] | None:
    """The capability's preview function, if it declares one."""
    if isinstance(entry, ActionEntry):
        return entry.binding.preview
    if isinstance(entry, ProcedureEntry):
        return entry.reference.preview
    return None


def compute(call: Call) -> Preview | None:
    """Phase 6: the call's preview (None: the capability declares none). Refuses the call when
    the app's function raises or returns something that is not a preview."""
    if declared(call.target.entry) is None:
        return None
    try:
        return _preview(call.target, call.consumer, call.host, call.value, call.effective)
    except CapabilityFailure as exc:
        raise PhaseRefusal(exc.error) from None
    except PreviewRefused as exc:
        log.error("preview of %s refused: %s", call.target.entry.capability_id, exc.why)
        _audit_failure(call, exc.problem)
        raise PhaseRefusal(failures.preview_refused(exc.problem)) from None
    except Exception:
        log.exception("preview of %s raised", call.target.entry.capability_id)
        _audit_failure(call, "preview-error")
        raise PhaseRefusal(failures.preview_error()) from None


def freshness(call: Call, preview: Preview) -> Callable[[], Freshness]:
    """Whether ``preview`` (computed for ``call`` in phase 6) still holds: the view's bound
    values are the ones the input was built from (phase 5), and the preview recomputed from the
    same input has the same digest. Never raises: a failure is "error"."""
    target, consumer, host = call.target, call.consumer, call.host
    value, effective, bound = call.value, call.effective, call.bound

    def check() -> Freshness:
        entry = target.entry
        try:
            bind = entry.reference.bind if isinstance(entry, ProcedureEntry) else None
            if bind is not None and bound is not None and digest(to_json_value(bind())) != digest(bound):
                return "stale"
            now = _preview(target, consumer, host, value, effective)
        except Exception as exc:  # the app's bind or preview raised, or returned no preview
            log.warning("preview of %s could not be recomputed: %r", entry.capability_id, exc)
            return "error"
        return "fresh" if now.digest == preview.digest else "stale"

    return check


def verify(call: Call) -> None:
    """Phase 9, just before the handler starts (nothing runs in between): refuse an approved
    call whose preview no longer holds."""
    state = _recheck(call)
    if state == "error":
        raise PhaseRefusal(failures.preview_error())
    if state == "stale":
        raise PhaseRefusal(failures.confirmation_invalid("stale"))


def still_approved(call: Call) -> bool:
    """``ActionContext.still_approved``: the same check, for a handler or executor that waits
    before it writes (False spoils the approval, as :func:`verify` does)."""
    return _recheck(call) == "fresh"


def _recheck(call: Call) -> Freshness:
    record = call.confirmation
    if record is None or record.freshness is None:
        return "fresh"
    state = record.freshness()
    if state != "fresh":
        call.pipeline.confirmations.spoil(record, call.invocation_id)
        if state == "error":
            _audit_failure(call, "preview-error")
    return state


def _preview(target: CallTarget, consumer: Any, host: Any, value: Any, effective: Any) -> Preview:
    entry = target.entry
    fn = declared(entry)
    assert fn is not None
    if isinstance(entry, ActionEntry):
        raw = fn(value, ReadContext(entry.capability_id, target.reg.registration_id, consumer, host))
    else:
        raw = fn(copy.deepcopy(effective))  # the app's function cannot change the call's input
    return make_preview(raw)


def _audit_failure(call: Call, problem: str) -> None:
    call.pipeline.audit(
        "preview-failed",
        capability_id=call.target.entry.capability_id,
        registration_id=call.target.reg.registration_id,
        invocation_id=call.invocation_id,
        consumer_id=call.consumer.id,
        detail=problem,
    )

