"""Step 5 of the procedure server: the request envelope, strictly parsed (size, type, UTF-8,
JSON, depth, known fields, invocation id, evidence), and the input re-validated by the
procedure's own contract."""

from __future__ import annotations

from typing import Any, Protocol

from starlette.requests import Request

from .._core.jsonvalue import canonical_json
from .._core.schemas.schema import Invalid
from ..bridge.wire import MAX_INVOCATION_ID
from .body import check_content_type, parse_json, read_limited, safe_pointer, too_large
from .config import ServerLimits
from .errors import Refusal, invalid_input
from .evidence import PRINTABLE_ID, parse_evidence
from .procedures import ConfirmationEvidence, ServedProcedure

ENVELOPE_KEYS = frozenset({"invocationId", "input", "confirmation"})


class CallNotes(Protocol):
    """Where step 5 notes what it has read so far: a refusal's error body and audit record name
    the invocation id, the evidence and the input once they parsed, even if a later check fails."""

    invocation_id: str | None
    confirmation: ConfirmationEvidence | None
    input: str | None  # canonical JSON of the input as sent (what digests and audit see)


async def read_envelope(request: Request, limits: ServerLimits, served: ServedProcedure, notes: CallNotes) -> Any:
    """Parse and check the body of a call to ``served``; returns the input as the contract
    validated it (what the implementation gets). Every defect is a typed ``Refusal``."""
    limit = limits.max_body_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    check_content_type(request.headers.get("content-type"))
    envelope = parse_json(await read_limited(request.stream(), limit), max_depth=limits.max_depth)
    if not isinstance(envelope, dict):
        raise Refusal(invalid_input("The request body must be a JSON object.", [("/", "must be an object")]))
    unknown = sorted(set(envelope) - ENVELOPE_KEYS)
    if unknown:
        # Plain names are repeated (a typo is easy to fix); anything else is not echoed.
        named = [(safe_pointer(f"/{key}"), "unknown field") for key in unknown[:20]]
        raise Refusal(
            invalid_input(
                "The request envelope has unknown fields; only invocationId, input and confirmation are allowed.",
                [(path, text) for path, text in named if path != "/"] or [("/", "has unknown fields")],
            )
        )
    invocation_id = envelope.get("invocationId")
    if not (
        isinstance(invocation_id, str)
        and len(invocation_id) <= MAX_INVOCATION_ID
        and PRINTABLE_ID.fullmatch(invocation_id)
    ):
        raise Refusal(
            invalid_input(
                "invocationId must be 1 to 256 printable characters.",
                [("/invocationId", "must be 1 to 256 printable ASCII characters, no spaces")],
            )
        )
    notes.invocation_id = invocation_id
    notes.confirmation = parse_evidence(envelope.get("confirmation"))
    if "input" not in envelope:
        raise Refusal(invalid_input("The call has no input.", [("/input", "is required")]))
    raw = envelope["input"]
    notes.input = canonical_json(raw)
    result = served.contract.input.validate(raw)
    if isinstance(result, Invalid):
        listed = [(safe_pointer(i.path), i.message) for i in result.issues]
        raise Refusal(
            invalid_input(
                f"The input is invalid at {listed[0][0]}: {listed[0][1]}. Fix it and retry.",
                listed,
            )
        )
    return result.value
