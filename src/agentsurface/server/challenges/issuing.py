"""Issuing a challenge: the level a procedure asks of this caller, the challenge minted for one
exact call, and the CONFIRMATION_REQUIRED refusal that carries it to the page's bridge."""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta

from ..errors import Refusal, capability_error
from ..procedures import Caller, ServedProcedure
from .challenge import LEVELS, NONCE_BYTES, ApprovalLevel, Challenge, input_digest

log = logging.getLogger("agentsurface.server")


def approval_level(served: ServedProcedure, caller: Caller) -> ApprovalLevel:
    """The level ``served.approval`` asks of this caller (the server decides, never the page)."""
    approval = served.approval
    try:
        level = approval(caller) if callable(approval) else approval
    except Exception:  # a failing hook never lowers the proof asked for
        log.exception("the approval hook of %s failed; asking for webauthn", served.id)
        return "webauthn"
    if level not in LEVELS:
        log.error("the approval hook of %s returned %r; asking for webauthn", served.id, level)
        return "webauthn"  # fail towards the stronger proof
    return level


def mint(
    served: ServedProcedure, caller: Caller, canonical_input: str, now: datetime, ttl: float
) -> Challenge:
    return Challenge(
        id="ch_" + secrets.token_urlsafe(18),
        caller=caller.scope,
        procedure=served.id,
        digest=input_digest(served.id, canonical_input),
        expires_at=now + timedelta(seconds=ttl),
        level=approval_level(served, caller),
        nonce=secrets.token_bytes(NONCE_BYTES),
    )


def required(served: ServedProcedure, challenge: Challenge) -> Refusal:
    """CONFIRMATION_REQUIRED (origin server), the challenge beside the error for the bridge."""
    refusal = Refusal(
        capability_error(
            "CONFIRMATION_REQUIRED",
            "The server requires the user's confirmation for this call. Ask the user to confirm, then retry.",
            effect=served.contract.effect,
            origin="server",
        )
    )
    refusal.extra = {"challenge": challenge.to_wire()}
    return refusal


__all__ = ["approval_level", "mint", "required"]
