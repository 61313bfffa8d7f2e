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

Its parts: the challenge and its hooks (:mod:`.challenge`), issuing one (:mod:`.issuing`) and
spending it in the call's transaction (:mod:`.spending`).
"""

from .challenge import LEVELS, ApprovalLevel, Challenge, ChallengeStore, VerifyPresence, input_digest
from .issuing import approval_level, mint, required
from .spending import invalid, settle

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
