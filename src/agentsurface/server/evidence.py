"""The page's confirmation evidence on the server: parsed from the envelope, then checked for a
procedure that requires the user's approval (present, fresh, accepted by the app's hook)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeAlias

from .._core.jsonvalue import canonical_json
from ..bridge.wire import MAX_CONFIRMATION_ID
from .errors import Refusal, capability_error
from .procedures import Caller, ConfirmationEvidence, ServedProcedure

log = logging.getLogger("agentsurface.server")

VerifyConfirmation: TypeAlias = Callable[[Caller, str, ConfirmationEvidence], bool]
PRINTABLE_ID = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no whitespace


MAX_WEBAUTHN_BYTES = 16_384  # the opaque proof-of-presence payload, as canonical JSON
EVIDENCE_KEYS = frozenset({"id", "approvedAt", "challenge", "webauthn"})


def _malformed() -> Refusal:
    return Refusal(
        capability_error(
            "CONFIRMATION_INVALID",
            "The confirmation evidence is malformed; ask the user to confirm again.",
            "with-confirmation",
            reason="malformed",
        )
    )


def _printable_id(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_CONFIRMATION_ID and PRINTABLE_ID.fullmatch(value) is not None


def parse_evidence(value: Any) -> ConfirmationEvidence | None:
    """The envelope's ``confirmation`` field, or ``None`` when absent; malformed is refused.

    ``{"approvedAt", "challenge"?, "id"?, "webauthn"?}``: at least one of ``challenge`` (the
    server-minted challenge it answers) and ``id`` (the page's own record)."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - EVIDENCE_KEYS:
        raise _malformed()
    ident, challenge, approved = value.get("id"), value.get("challenge"), value.get("approvedAt")
    when = _parse_instant(approved) if isinstance(approved, str) else None
    if when is None or (ident is None and challenge is None):
        raise _malformed()
    if (ident is not None and not _printable_id(ident)) or (challenge is not None and not _printable_id(challenge)):
        raise _malformed()
    webauthn = value.get("webauthn")
    if webauthn is not None:
        if not isinstance(webauthn, dict):
            raise _malformed()
        try:
            size = len(canonical_json(webauthn).encode("utf-8"))
        except (TypeError, ValueError):
            raise _malformed() from None
        if size > MAX_WEBAUTHN_BYTES:
            raise _malformed()
    return ConfirmationEvidence(str(ident if ident is not None else challenge), when, challenge, webauthn)


def check_evidence(
    evidence: ConfirmationEvidence | None,
    served: ServedProcedure,
    caller: Caller | None,
    now: datetime,
    max_age: float,
    clock_skew: float,
    verify: VerifyConfirmation | None,
) -> None:
    """A procedure that requires approval needs fresh evidence of it (step 6 of the server).

    Evidence that names no server-minted challenge is answered by the server with a challenge
    (app.py) before this runs; the challenge itself is spent in the call's transaction."""
    if not served.require_confirmation:
        return
    if evidence is None:
        raise Refusal(
            capability_error(
                "CONFIRMATION_REQUIRED",
                "The server requires the user's confirmation for this call. Ask the user to confirm, then retry.",
                effect=served.contract.effect,
                origin="server",
            )
        )
    age = now - evidence.approved_at
    if age > timedelta(seconds=max_age) or age < -timedelta(seconds=clock_skew):
        raise Refusal(
            capability_error(
                "CONFIRMATION_INVALID",
                "The confirmation has expired; ask the user to confirm again.",
                "with-confirmation",
                reason="expired",
            )
        )
    assert caller is not None  # step 1 authenticated the call before step 6
    if verify is not None and not _accepted(verify, caller, served.id, evidence):
        raise Refusal(
            capability_error(
                "CONFIRMATION_INVALID",
                "The server did not accept this confirmation; ask the user to confirm again.",
                "with-confirmation",
                reason="rejected",
            )
        )


def _parse_instant(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _accepted(check: VerifyConfirmation, caller: Caller, procedure_id: str, evidence: ConfirmationEvidence) -> bool:
    try:
        return check(caller, procedure_id, evidence) is True
    except Exception:  # a failing hook never approves
        log.exception("the verify_confirmation hook failed")
        return False
