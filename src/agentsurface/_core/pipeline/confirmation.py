"""Confirmation evidence: single-use, expiring approvals bound to one exact request.

A record binds to the canonical digest of ``{surfaceId, registrationId, capabilityId,
consumerKey, effectiveInput, effect}`` (and ``preview``, the digest of what the person was shown
would change, when the capability declares a preview) and keeps the exact values too, so matching
is by value, never by hash alone. The host UI lists ``pending()``, calls ``resolve()``; adapters
``wait_for()``.

A previewed request is *stale* once the state it was previewed from changed: at the person's
Approve (the record's ``freshness`` check), or when the call comes back with the approval and its
preview differs. A stale record never approves anything again.
"""

from __future__ import annotations

import asyncio
import logging
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import field
from typing import Any, Literal

from ..clock import Cancel, Clock, iso
from ..events import SurfaceEvent, make_event
from ..jsonvalue import JsonValue, canonical_json, digest
from ..preview import Preview
from ..records import record

log = logging.getLogger("agentsurface")

Outcome = Literal["approved", "denied", "expired", "stale"]
# Whether what a pending request previews still holds: "fresh", "stale" (the state it was
# previewed from changed), or "error" (its preview or binding could not be recomputed).
Freshness = Literal["fresh", "stale", "error"]

# The person's own words when they deny (the dialog's optional "why"): plain text on one line,
# at most this many characters, given to the agent as the person's and kept by the audit.
MAX_DENIAL_REASON = 200


def denial_reason(text: object) -> str | None:
    """``text`` as a denial reason: control and format characters (bidi overrides, zero-width
    ones) dropped, whitespace runs made one space, at most ``MAX_DENIAL_REASON`` characters;
    None when nothing is left (or it is not a string)."""
    if not isinstance(text, str):
        return None
    kept = "".join(
        " " if ch.isspace() else ch for ch in text[: MAX_DENIAL_REASON * 4]
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    said = " ".join(kept.split())
    if len(said) > MAX_DENIAL_REASON:
        said = said[: MAX_DENIAL_REASON - 1].rstrip() + "…"
    return said or None
RecordStatus = Literal["pending", "approved", "denied", "expired", "consumed", "stale"]

# How many forgotten confirmation ids the store still recognises as expired (bounded memory).
FORGOTTEN_KEPT = 4096


@record
class PendingConfirmation:
    """What a host dialog renders. ``input`` is the exact effective input being approved;
    ``preview``, when the capability declares one, what the call will change."""

    confirmation_id: str
    capability_id: str
    registration_id: str
    consumer_key: str
    effect: str
    summary: str
    input: JsonValue
    requested_at: str
    expires_at: str
    preview: Preview | None = None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "confirmationId": self.confirmation_id,
            "capabilityId": self.capability_id,
            "registrationId": self.registration_id,
            "consumerKey": self.consumer_key,
            "effect": self.effect,
            "summary": self.summary,
            "input": self.input,
            "requestedAt": self.requested_at,
            "expiresAt": self.expires_at,
        }
        if self.preview is not None:
            out["preview"] = self.preview.to_json()
        return out


@record(frozen=False, eq=False)
class ConfirmationRecord:
    id: str
    request: dict[str, Any]  # the exact bound request values
    digest: str
    pending: PendingConfirmation
    expires_at: float
    status: RecordStatus = "pending"
    approved_at: float | None = None
    reason: str | None = None
    waiters: list[asyncio.Future[Outcome]] = field(default_factory=list)
    cancel_timer: Cancel | None = None
    # A previewed request: is what it previews still what would happen? (None: no preview.)
    freshness: Callable[[], Freshness] | None = None


def request_material(
    surface_id: str,
    registration_id: str,
    capability_id: str,
    consumer_key: str,
    effective_input: Any,
    effect: str,
    preview: str | None = None,
) -> dict[str, Any]:
    """What an approval is bound to; ``preview``: the digest of the request's preview."""
    material = {
        "surfaceId": surface_id,
        "registrationId": registration_id,
        "capabilityId": capability_id,
        "consumerKey": consumer_key,
        "effectiveInput": effective_input,
        "effect": effect,
    }
    if preview is not None:
        material["preview"] = preview
    return material


class ConfirmationController:
    """The registry's confirmation store and the host UI's interface to it."""

    def __init__(
        self,
        clock: Clock,
        ttl: float,
        max_pending: int,
        new_id: Callable[[], str],
        emit: Callable[[SurfaceEvent], None],
        audit: Callable[..., None],
    ) -> None:
        self._clock = clock
        self._ttl = ttl
        self._max_pending = max_pending
        self._new_id = new_id
        self._emit = emit
        self._audit = audit
        self._records: dict[str, ConfirmationRecord] = {}
        # Records dropped from the store, by id: evidence naming one arrives late, so it is
        # "expired" (or "denied", "consumed" as it ended), not "mismatch", which would tell the
        # agent it asked for the wrong call.
        self._forgotten: OrderedDict[str, str] = OrderedDict()
        self._listeners: list[Callable[[list[PendingConfirmation]], None]] = []
        self._unshown_warned: set[str] = set()  # capabilities already warned about (once each)

    # ------------------------------------------------------------------ host UI

    def pending(self) -> list[PendingConfirmation]:
        self._expire_due()
        return [r.pending for r in self._records.values() if r.status == "pending"]

    def get(self, confirmation_id: str) -> PendingConfirmation | None:
        record = self._records.get(confirmation_id)
        return None if record is None else record.pending

    def resolve(self, confirmation_id: str, *, approved: bool, reason: str | None = None) -> bool:
        """Approve or deny a pending request. Returns False if it is not pending any more.
        ``reason``: the person's words for a denial (sanitized by :func:`denial_reason`).

        Approving a previewed request first checks that its preview still holds: if the state
        it was previewed from changed, the request ends *stale* instead (True is still returned:
        it was pending and is settled; :meth:`status` says "stale") and nothing is approved."""
        self._expire_due()
        record = self._records.get(confirmation_id)
        if record is None or record.status != "pending":
            return False
        if approved and record.freshness is not None and record.freshness() != "fresh":
            self.spoil(record)
            return True
        if approved:
            record.status = "approved"
            record.approved_at = self._clock.now()
        else:
            record.status = "denied"
            record.reason = denial_reason(reason)
        self._settle(record, "approved" if approved else "denied")
        return True

    def status(self, confirmation_id: str) -> RecordStatus | None:
        """Where a request stands (None: unknown here, or forgotten)."""
        record = self._records.get(confirmation_id)
        return None if record is None else record.status

    def reason_of(self, confirmation_id: str) -> str | None:
        """The person's words for a denied request (None: none given, or not denied)."""
        record = self._records.get(confirmation_id)
        return record.reason if record is not None and record.status == "denied" else None

    def withdraw(self, confirmation_id: str) -> bool:
        """The call that asked gave up (the agent cancelled it, or its bridge's bound passed):
        the pending request expires now, so the host's dialog closes and a later approval applies
        nothing (another call waiting for the very same request sees it expire, and asks again).
        False when it is not pending."""
        self._expire_due()
        record = self._records.get(confirmation_id)
        if record is None or record.status != "pending":
            return False
        record.status = "expired"
        self._settle(record, "expired")
        return True

    async def wait_for(self, confirmation_id: str, *, signal: Any = None) -> Outcome:
        """Resolve when the request is approved, denied or expires.

        ``signal`` (a CancelSignal) aborts the wait with ``asyncio.CancelledError``.
        """
        self._expire_due()
        record = self._records.get(confirmation_id)
        if record is None:
            return "expired"
        if record.status in ("approved", "consumed"):
            return "approved"
        if record.status in ("denied", "expired", "stale"):
            return record.status
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        record.waiters.append(future)
        remove = None
        if signal is not None:
            remove = signal.add_listener(lambda _reason: future.cancel())
        try:
            return await future
        finally:
            if remove is not None:
                remove()
            if future in record.waiters:
                record.waiters.remove(future)

    @property
    def handled(self) -> bool:
        """Whether something shows the person the pending confirmations: a host dialog (the
        page's ``ConfirmationDialog``, or one of the app's own) subscribed here. Without
        one a consequential call waits until its approval expires, with nothing to click."""
        return bool(self._listeners)

    def subscribe(self, listener: Callable[[list[PendingConfirmation]], None]) -> Callable[[], None]:
        """Call ``listener(pending)`` whenever the pending set changes (a host dialog does: the
        store then counts as :attr:`handled`)."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # ------------------------------------------------------------------ registry side

    def find_pending(self, request: dict[str, Any]) -> ConfirmationRecord | None:
        """A pending record for exactly this request (re-requests reuse it)."""
        self._expire_due()
        key = digest(request)
        for held in self._records.values():
            if held.status == "pending" and held.digest == key and _same(held.request, request):
                return held
        return None

    def create(
        self,
        request: dict[str, Any],
        summary: str,
        *,
        preview: Preview | None = None,
        freshness: Callable[[], Freshness] | None = None,
    ) -> ConfirmationRecord | None:
        """A new pending record, or None when the pending set is full. ``preview`` (its digest
        in ``request``) is shown to the person; ``freshness`` tells whether it still holds."""
        self._expire_due()
        if sum(1 for r in self._records.values() if r.status == "pending") >= self._max_pending:
            return None
        now = self._clock.now()
        cid = self._new_id()
        pending = PendingConfirmation(
            confirmation_id=cid,
            capability_id=request["capabilityId"],
            registration_id=request["registrationId"],
            consumer_key=request["consumerKey"],
            effect=request["effect"],
            summary=summary,
            input=request["effectiveInput"],
            requested_at=iso(now),
            expires_at=iso(now + self._ttl),
            preview=preview,
        )
        record = ConfirmationRecord(cid, request, digest(request), pending, now + self._ttl)
        record.freshness = freshness
        record.cancel_timer = self._clock.call_later(self._ttl, self._expire_due)
        self._records[cid] = record
        if not self._listeners and pending.capability_id not in self._unshown_warned:
            self._unshown_warned.add(pending.capability_id)
            log.warning(
                "%s waits for the person's approval (for up to %g s), but nothing shows it: no "
                "confirmation dialog is installed (agentsurface.page.ConfirmationDialog("
                "registry), or a dialog of your own subscribed to registry.confirmations)",
                pending.capability_id,
                self._ttl,
            )
        self._emit(
            make_event(
                "confirmation-requested",
                confirmationId=cid,
                capabilityId=pending.capability_id,
                expiresAt=pending.expires_at,
            )
        )
        self._audit(
            "confirmation-requested",
            capability_id=pending.capability_id,
            registration_id=pending.registration_id,
        )
        self._notify()
        return record

    def check(self, confirmation_id: str, request: dict[str, Any]) -> tuple[str, ConfirmationRecord | None]:
        """Classify evidence: approved / pending / denied / expired / consumed / stale / mismatch.

        "stale": the very request the record was made for, whose preview now differs (the
        state it was previewed from changed); the record is spoiled, never to approve again."""
        self._expire_due()
        record = self._records.get(confirmation_id)
        if record is None:
            return self._forgotten.get(confirmation_id, "mismatch"), None
        if record.status == "expired":
            return "expired", record  # expired wins: a late approval is late, whatever it covers
        if record.digest != digest(request) or not _same(record.request, request):
            if _only_preview_differs(record.request, request):
                # The very request, in another state: a live approval is spoiled; a denied or
                # used one stays what it was.
                if record.status in ("pending", "approved"):
                    log.info("confirmation %s: the state it was previewed from changed", confirmation_id)
                    self.spoil(record)
                return record.status, record
            log.info("confirmation %s does not match the request it is used with", confirmation_id)
            return "mismatch", record
        return record.status, record

    def spoil(self, record: ConfirmationRecord, invocation_id: str | None = None) -> None:
        """``record``'s preview no longer holds: it ends stale (a pending one settles, so its
        dialog closes and its waiters hear "stale"; an approved or consumed one is not
        resolved again) and is audited as ``confirmation-stale``."""
        if record.status == "stale":
            return
        was_pending, record.status = record.status == "pending", "stale"
        if was_pending:
            self._settle(record, "stale")
            return
        self._audit(
            "confirmation-stale",
            capability_id=record.pending.capability_id,
            registration_id=record.pending.registration_id,
            invocation_id=invocation_id,
        )

    def consume(self, record: ConfirmationRecord) -> None:
        record.status = "consumed"
        self._audit(
            "confirmation-consumed",
            capability_id=record.pending.capability_id,
            registration_id=record.pending.registration_id,
        )

    def expire_all(self) -> None:
        """Registry disposal: every pending record expires now."""
        for held in self._records.values():
            if held.status == "pending":
                held.status = "expired"
                self._settle(held, "expired")

    def _expire_due(self) -> None:
        now = self._clock.now()
        for held in list(self._records.values()):
            if held.status == "pending" and now >= held.expires_at:
                held.status = "expired"
                self._settle(held, "expired")
            elif held.status == "approved" and now >= held.expires_at:
                # Evidence is time-bound: an approval not spent before expiresAt lapses (it was
                # already resolved, so no second confirmation-resolved event).
                held.status = "expired"
                self._audit(
                    "confirmation-expired",
                    capability_id=held.pending.capability_id,
                    registration_id=held.pending.registration_id,
                )
        # Forget settled records once they are well past expiry (bounded store).
        for cid, held in list(self._records.items()):
            if held.status != "pending" and now >= held.expires_at + self._ttl:
                del self._records[cid]
                self._forgotten[cid] = held.status  # expired, denied or consumed by then
                while len(self._forgotten) > FORGOTTEN_KEPT:
                        self._forgotten.popitem(last=False)

    def _settle(self, record: ConfirmationRecord, outcome: Outcome) -> None:
        if record.cancel_timer is not None and outcome != "expired":
            record.cancel_timer()
        for waiter in record.waiters:
            if not waiter.done():
                waiter.set_result(outcome)
        self._emit(make_event("confirmation-resolved", confirmationId=record.id, outcome=outcome))
        self._audit(
            f"confirmation-{outcome}",
            capability_id=record.pending.capability_id,
            registration_id=record.pending.registration_id,
            detail=record.reason if outcome == "denied" else None,
        )
        self._notify()

    def _notify(self) -> None:
        if not self._listeners:
            return
        current = [r.pending for r in self._records.values() if r.status == "pending"]
        for listener in tuple(self._listeners):
            try:
                listener(current)
            except Exception:
                log.exception("confirmation listener failed")


def _only_preview_differs(recorded: dict[str, Any], request: dict[str, Any]) -> bool:
    """Both requests carry a preview digest, and are the same request but for it."""
    if "preview" not in recorded or "preview" not in request:
        return False
    return _same({**recorded, "preview": None}, {**request, "preview": None})


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Exact-value comparison through canonical JSON (key order and -0 irrelevant)."""
    return canonical_json(a) == canonical_json(b)
