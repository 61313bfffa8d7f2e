"""Server-minted approval challenges: what makes the page's approval verifiable on the server.

A call to a procedure that requires approval, without evidence naming a challenge, is refused
with CONFIRMATION_REQUIRED (origin ``server``) and a fresh challenge in the refusal body's
top-level ``challenge`` field (never inside ``error``, so nothing of it reaches the agent: the
page's bridge strips it). The challenge is stored in the invocation store and bound to

- the caller, as the server authenticated it (its scope: tenant and id),
- the procedure id,
- the digest of the exact input of that request,
- an expiry (``ServerLimits.challenge_ttl``), and
- a random id and a random nonce (the bytes a WebAuthn assertion signs, at level ``webauthn``).

The page's retry carries ``{"challenge": <id>, "approvedAt": ..., "id"?: <page record>,
"webauthn"?: {...}}``. The server accepts it only for a challenge it minted, for that caller,
procedure and input digest, before expiry, and once: the challenge is spent in the call's own
store transaction, the one that records the invocation and the app's writes, so a crash can
neither spend it without applying nor apply twice. Refusals: CONFIRMATION_INVALID with reason
``used``, ``mismatch``, ``unknown``, ``expired`` or ``malformed``; a ``presence`` hook may add
its own reason (``verify_presence``, for WebAuthn).
"""

from __future__ import annotations

import base64
import inspect
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, TypeAlias

from ..._core.jsonvalue import JsonValue, digest
from ..errors import Refusal, capability_error
from ..procedures import Caller, ConfirmationEvidence, ServedProcedure

log = logging.getLogger("agentsurface.server")

ApprovalLevel: TypeAlias = Literal["confirm", "webauthn"]
LEVELS: tuple[ApprovalLevel, ...] = ("confirm", "webauthn")
NONCE_BYTES = 32
ChallengeReason: TypeAlias = Literal["used", "mismatch", "unknown", "expired", "malformed"]


@dataclass(frozen=True, slots=True)
class Challenge:
    """One minted challenge, as the store keeps it.

    ``caller`` is the caller's scope (``Caller.scope``); ``digest`` binds procedure and input;
    ``nonce`` is the raw random bytes a WebAuthn assertion signs (``clientDataJSON.challenge``
    is its base64url form, :attr:`nonce_b64`).
    """

    id: str
    caller: str
    procedure: str
    digest: str
    expires_at: datetime
    level: ApprovalLevel
    nonce: bytes

    @property
    def nonce_b64(self) -> str:
        return b64url(self.nonce)

    def to_wire(self) -> dict[str, JsonValue]:
        """What the refusal carries to the page's bridge (never to the agent)."""
        return {
            "id": self.id,
            "procedure": self.procedure,
            "level": self.level,
            "expiresAt": self.expires_at.isoformat().replace("+00:00", "Z"),
            "nonce": self.nonce_b64,
        }


VerifyPresence: TypeAlias = Callable[[Caller, Challenge, "dict[str, Any] | None"], "str | None"]
"""``verify_presence(caller, challenge, webauthn_payload) -> None | reason``: the server's hook
for proof of a person (WebAuthn). It runs inside the call's transaction, after the challenge
was found valid for this call and before it is spent; ``None`` accepts, a short reason string
refuses with CONFIRMATION_INVALID and that reason (the challenge stays unspent). Without a
hook, a challenge of level ``webauthn`` is refused (reason ``presence-required``). A hook with a
``db`` parameter gets the call's connection (``db=``), so what it writes (a passkey's sign
counter: :meth:`agentsurface.server.passkeys.Passkeys.verify_presence`) commits with the call."""


class ChallengeStore(Protocol):
    """What a store offers for challenges (both shipped stores implement it)."""

    def save_challenge(self, challenge: Challenge) -> None: ...

    def claim_challenge(self, db: Any, challenge_id: str) -> tuple[Challenge, bool] | None:
        """Inside the call's transaction: the challenge and whether it was spent, locked
        against a concurrent spend until the transaction ends; None if unknown."""
        ...

    def spend_challenge(self, db: Any, challenge_id: str, invocation_id: str, at: datetime) -> bool:
        """Inside the call's transaction: mark it spent; False if it already was."""
        ...

    def forget_challenges_before(self, moment: datetime) -> int: ...


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def input_digest(procedure_id: str, canonical_input: str) -> str:
    """What a challenge binds: the procedure and the canonical JSON of the exact input."""
    return digest({"procedure": procedure_id, "input": canonical_input})


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
    if challenge.procedure != procedure_id or challenge.digest != call_digest:
        return "mismatch"
    if now >= challenge.expires_at:
        return "expired"
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


__all__ = [
    "LEVELS",
    "ApprovalLevel",
    "Challenge",
    "ChallengeStore",
    "VerifyPresence",
    "approval_level",
    "input_digest",
    "invalid",
    "mint",
    "required",
    "settle",
]
