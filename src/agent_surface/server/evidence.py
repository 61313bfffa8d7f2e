"""The page's confirmation evidence on the server: parsed from the envelope, then checked for a
procedure that requires the user's approval (present, fresh, accepted by the app's hook)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeAlias

from ..bridge.wire import MAX_CONFIRMATION_ID
from .errors import Refusal, capability_error
from .procedures import Caller, ConfirmationEvidence, ServedProcedure

log = logging.getLogger("agent_surface.server")

VerifyConfirmation: TypeAlias = Callable[[Caller, str, ConfirmationEvidence], bool]
PRINTABLE_ID = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no whitespace


def parse_evidence(value: Any) -> ConfirmationEvidence | None:
    """The envelope's ``confirmation`` field, or ``None`` when absent; malformed is refused."""
    if value is None:
        return None
    ident = value.get("id") if isinstance(value, dict) else None
    approved = value.get("approvedAt") if isinstance(value, dict) else None
    when = _parse_instant(approved) if isinstance(approved, str) else None
    if (
        not isinstance(ident, str)
        or len(ident) > MAX_CONFIRMATION_ID
        or not PRINTABLE_ID.fullmatch(ident)
        or when is None
        or set(value) - {"id", "approvedAt"}
    ):
        raise Refusal(
            capability_error(
                "CONFIRMATION_INVALID",
                "The confirmation evidence is malformed; ask the user to confirm again.",
                "with-confirmation",
                reason="malformed",
            )
        )
    return ConfirmationEvidence(ident, when)


def check_evidence(
    evidence: ConfirmationEvidence | None,
    served: ServedProcedure,
    caller: Caller | None,
    now: datetime,
    max_age: float,
    clock_skew: float,
    verify: VerifyConfirmation | None,
) -> None:
    """A procedure that requires approval needs fresh evidence of it (step 6 of the server)."""
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
