"""Spending a challenge, inside the call's transaction: checked against the caller, procedure,
input digest and expiry, the presence hook asked when the level needs it, then spent once; or
the CONFIRMATION_INVALID refusal with the reason it was not."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..errors import Refusal, capability_error
from ..procedures import Caller, ConfirmationEvidence
from .challenge import Challenge, ChallengeStore, VerifyPresence

log = logging.getLogger("agentsurface.server")


_MESSAGES: dict[str, str] = {
    "used": "This confirmation was already used; ask the user to confirm this call again.",
    "mismatch": "This confirmation was given for another request; ask the user to confirm this one.",
    "unknown": "The server did not issue this confirmation; ask the user to confirm again.",
    "expired": "The confirmation has expired; ask the user to confirm again.",
    "malformed": "The confirmation evidence is malformed; ask the user to confirm again.",
}


def invalid(reason: str) -> Refusal:
    """CONFIRMATION_INVALID with ``reason``; the message never repeats the challenge id."""
    message = _MESSAGES.get(reason, "The server did not accept this confirmation; ask the user to confirm again.")
    return Refusal(capability_error("CONFIRMATION_INVALID", message, "with-confirmation", reason=reason))


def settle(
    store: ChallengeStore,
    db: Any,
    evidence: ConfirmationEvidence,
    caller: Caller,
    procedure_id: str,
    call_digest: str,
    invocation_id: str,
    now: datetime,
    verify_presence: VerifyPresence | None,
) -> str | None:
    """Inside the call's transaction: spend the evidence's challenge for this exact call
    (``call_digest``: :func:`input_digest` of its procedure and input). Returns None when spent
    (the call may apply), else the refusal reason."""
    challenge_id = evidence.challenge
    if challenge_id is None:
        return "malformed"
    found = store.claim_challenge(db, challenge_id)
    if found is None:
        return "unknown"
    challenge, spent = found
    if challenge.caller != caller.scope:
        return "mismatch"  # before "used": another caller learns nothing of this challenge
    if spent:
        return "used"
    if now >= challenge.expires_at:
        return "expired"  # before "mismatch": a late approval is late, whatever it was for
    if challenge.procedure != procedure_id or challenge.digest != call_digest:
        return "mismatch"
    if challenge.level == "webauthn" or evidence.webauthn is not None:
        reason = _presence(verify_presence, caller, challenge, evidence.webauthn, db)
        if reason is not None:
            return reason
    if not store.spend_challenge(db, challenge_id, invocation_id, now):
        return "used"
    return None


def _takes_db(hook: Callable[..., Any]) -> bool:
    try:
        return "db" in inspect.signature(hook).parameters
    except (TypeError, ValueError):
        return False


def _presence(
    hook: VerifyPresence | None, caller: Caller, challenge: Challenge, payload: dict[str, Any] | None, db: Any
) -> str | None:
    if hook is None:
        return "presence-required" if challenge.level == "webauthn" else None
    try:
        if _takes_db(hook):
            reason = hook(caller, challenge, payload, db=db)  # type: ignore[call-arg]
        else:
            reason = hook(caller, challenge, payload)
    except Exception:  # a failing hook never approves
        log.exception("the verify_presence hook failed")
        return "presence-rejected"
    if reason is None:
        return None
    return reason if isinstance(reason, str) and reason else "presence-rejected"


__all__ = ["invalid", "settle"]
