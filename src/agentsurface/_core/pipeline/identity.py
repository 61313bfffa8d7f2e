"""Phase 1, identity: a well-formed request envelope, then dedupe by (consumer key, invocation id).

A repeated id with the same request joins the call in flight or gets its cached terminal
result; the same id with a different request is refused.
"""

from __future__ import annotations

import asyncio

from ..consumer import Consumer
from ..ids import random_id
from ..jsonvalue import NOT_PLAIN, digest, plain_copy
from . import failures
from .call import UNCOPIED, Admitted
from .dedupe import LazyFingerprint
from .effective_input import MAX_INPUT_DEPTH
from .invocation import MISSING, Invocation, InvocationResult
from .runtime import Pipeline
from .settlement import result

_ENVELOPE_FIELDS = {
    "instance_id": "instanceId",
    "registration_id": "registrationId",
    "surface_id": "surfaceId",
    "surface_version": "surfaceVersion",
    "confirmation_id": "confirmationId",
}

_TEXT_OR_NONE = (str, type(None))


def enter(
    pipeline: Pipeline, req: Invocation, consumer: Consumer
) -> Admitted | InvocationResult | asyncio.Future[InvocationResult]:
    """Admit a fresh call, or answer now (refused or cached), or hand back the call to join."""
    minted = not req.invocation_id
    invocation_id = random_id("inv_", 16) if minted else req.invocation_id
    if not isinstance(invocation_id, str) or not invocation_id or len(invocation_id) > 256:
        return result(pipeline, req, "invalid", failures.bad_invocation_id())
    if not (  # the common envelope, checked inline; _malformed_envelope names the fault
        type(req.instance_id) in _TEXT_OR_NONE
        and type(req.registration_id) in _TEXT_OR_NONE
        and type(req.surface_id) in _TEXT_OR_NONE
        and type(req.surface_version) in _TEXT_OR_NONE
        and type(req.confirmation_id) in _TEXT_OR_NONE
    ):
        malformed = _malformed_envelope(req)
        if malformed is not None:
            return result(pipeline, req, invocation_id, failures.malformed_envelope(malformed))
    key = f"{consumer._key} {invocation_id}"  # Consumer.key, without the property call
    if minted or pipeline.dedupe.unused(key):
        # Nobody knows a fresh id until its result names it, and an id no call holds or left
        # a result under has nothing to be compared with: nothing to find, nobody to join yet.
        # Its result is still cached, for a caller that retries with that id; the request's
        # digest waits for such a caller (or one joining it in flight), over a private copy
        # that the phases reuse.
        raw = req.input
        copied = MISSING if raw is MISSING else plain_copy(raw, MAX_INPUT_DEPTH)
        # (The envelope's other fields are text or None by now: the material always digests.)
        if copied is not NOT_PLAIN and type(req.capability_id) is str:
            lazy = LazyFingerprint(req, copied)
            if not minted:
                pipeline.dedupe.begin(key, lazy)
            return Admitted(invocation_id, key, lazy, copied)
    try:
        fingerprint = digest(req.fingerprint_material())
    # RecursionError: hostile nesting (or a cycle) deeper than the interpreter's stack.
    except (TypeError, ValueError, RecursionError):
        return result(pipeline, req, invocation_id, failures.not_plain_json())
    if minted:  # an input the careful paths name the faults of (or digest the long way)
        return Admitted(invocation_id, key, fingerprint, UNCOPIED)
    state, found = pipeline.dedupe.lookup(key, fingerprint)
    if state == "conflict":
        return result(pipeline, req, invocation_id, failures.invocation_conflict())
    if isinstance(found, (InvocationResult, asyncio.Future)):  # cached, or in flight to join
        return found
    pipeline.dedupe.begin(key, fingerprint)
    return Admitted(invocation_id, key, fingerprint, UNCOPIED)


def _malformed_envelope(req: Invocation) -> str | None:
    """The wire name of the first targeting/evidence field that is set but not a string.

    These fields arrive from agents (meta-mode envelopes) and are used as lookup keys: a list
    or dict there must settle as INVALID_INPUT, not raise ``unhashable type`` mid-pipeline."""
    for name, wire in _ENVELOPE_FIELDS.items():
        value = getattr(req, name)
        if value is not None and not isinstance(value, str):
            return wire
    return None
