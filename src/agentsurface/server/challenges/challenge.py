"""A server-minted approval challenge: what the store keeps (:class:`Challenge`), the levels of
proof it asks for (:data:`ApprovalLevel`), the app's hook for proof of a person
(:data:`VerifyPresence`) and what a store offers for challenges (:class:`ChallengeStore`)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias

from ..._core.jsonvalue import JsonValue, digest
from ..._core.records import record
from ..procedures import Caller

ApprovalLevel: TypeAlias = Literal["confirm", "webauthn"]
LEVELS: tuple[ApprovalLevel, ...] = ("confirm", "webauthn")
NONCE_BYTES = 32
ChallengeReason: TypeAlias = Literal["used", "mismatch", "unknown", "expired", "malformed"]


@record
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

    def save_challenge(
        self, challenge: Challenge, *, cap: int | None = None, now: datetime | None = None
    ) -> Challenge | datetime: ...

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


__all__ = [
    "LEVELS",
    "NONCE_BYTES",
    "ApprovalLevel",
    "Challenge",
    "ChallengeReason",
    "ChallengeStore",
    "VerifyPresence",
    "b64url",
    "input_digest",
]
