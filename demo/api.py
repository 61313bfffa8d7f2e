"""The demo's API around the library's procedure server: who is calling, the audit log, and the
app's own routes (``GET /api/session``, ``GET /api/devices``, unknown ``/api/...`` paths).

- Authentication: ``Authorization: Bearer <token>`` names a user of the database. The page's agent
  bridge marks its calls with ``X-Agent-Surface-Channel: agent``: the agent acting for a user is
  its own caller (own rate-limit budget, own invocation ids), so the agent never starves the
  person's buttons. Either way the tenant and permissions come from the database, never the page.
- Audit: every call, accepted or refused, gets one row, written in the call's own transaction
  when it changed something. Refused anonymous calls and a user's 429s are counted, not listed:
  one row per caller, outcome and operation per minute, whose ``attempts`` says how many calls it
  stands for, counted in memory and added to the row when the window ends or on ``flush`` (so
  such calls cannot grow the database, or write to it, at wire speed).
- The app's own routes follow the procedure server's order (authenticate, rate limit, resolve,
  validate, run) and answer in its typed error shape.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal, cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_surface import canonical_json
from agent_surface.bridge import CHANNEL_HEADER
from agent_surface.server import (
    Caller,
    CallRecord,
    RateLimit,
    RateLimiter,
    Refusal,
    SharedRateLimiter,
    execution_failed,
    not_authenticated,
    rate_limited,
)

from .db import AuditEntry, DeviceFilter, Json, Principal, Store, Tx, iso_seconds
from .errors import method_not_allowed, refusal_response, route_not_found
from .inputs import listing_params, parse_listing
from .procedures import PERMISSIONS, SERVED, allowed_procedures

log = logging.getLogger("demo.api")

TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{1,256}")
Channel = Literal["person", "agent"]
SERVED_NAMES = frozenset(p.id.removeprefix("domain:") for p in SERVED)
DEFAULT_RATE_LIMIT = RateLimit(burst=60, per_second=1.0)


@dataclass(frozen=True, slots=True)
class Session:
    """What the server knows of a caller: the user (from the database) and who acts for them."""

    principal: Principal
    channel: Channel


def _utc_now() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------------------- identity


class Authenticator:
    """The procedure server's ``authenticate`` hook, also used by the app's own routes."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def session(self, headers: Mapping[str, str]) -> Session | None:
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not TOKEN.fullmatch(token):
            return None
        principal = self._store.run(lambda tx: tx.principal_by_token(token))
        if principal is None:
            return None
        channel: Channel = "agent" if headers.get(CHANNEL_HEADER.lower(), "").lower() == "agent" else "person"
        return Session(principal, channel)

    def __call__(self, request: Request) -> Caller | None:
        session = self.session(request.headers)
        return None if session is None else caller_of(session)


def caller_of(session: Session) -> Caller:
    who = session.principal
    return Caller(
        id=who.user_id if session.channel == "person" else f"{who.user_id}~agent",
        tenant=who.tenant,
        permissions=PERMISSIONS[who.role],
        data=session,
    )


def rate_limit_key(session: Session | None, client: str) -> str:
    return f"anon:{client}" if session is None else f"caller:{caller_of(session).scope}"


# ---------------------------------------------------------------------------------------- audit


class AnonymousRefusals:
    """Folds refused calls into one audit row per (user, outcome, operation) per window.

    The first refusal of a window writes a row; later ones are counted in memory and added to its
    ``attempts`` when the window ends or on :meth:`flush`. Operations are the API's own names
    (unknown routes share one), so the rows per window are bounded.
    """

    WINDOW_SECONDS = 60.0
    UNKNOWN_ROUTE = "unknown-route"

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._window_start: float | None = None
        self._rows: dict[tuple[str | None, str, str], int] = {}  # (user, outcome, operation) -> row id
        self._pending: dict[int, int] = {}  # row id -> attempts not yet added to it
        self._lock = threading.Lock()

    def record(self, tx: Tx, entry: AuditEntry, known_route: bool) -> None:
        operation = entry.operation if known_route else self.UNKNOWN_ROUTE
        key = (entry.user_id, entry.outcome, operation)
        with self._lock:  # two threads never open two rows for one key
            now = self._monotonic()
            if self._window_start is None or now - self._window_start >= self.WINDOW_SECONDS:
                self._write_pending(tx)
                self._window_start, self._rows = now, {}
            row_id = self._rows.get(key)
            if row_id is None:
                self._rows[key] = tx.audit(replace(entry, operation=operation, input=None))
            else:
                self._pending[row_id] = self._pending.get(row_id, 0) + entry.attempts

    def flush(self, tx: Tx) -> None:
        """Add the attempts counted in memory to their rows."""
        with self._lock:
            self._write_pending(tx)

    def _write_pending(self, tx: Tx) -> None:
        for row_id, attempts in self._pending.items():
            tx.count_attempt(row_id, attempts)
        self._pending = {}


class AuditLog:
    """Writes audit rows: for the procedure server (its ``audit`` hook) and the app's routes."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._anonymous = AnonymousRefusals(monotonic)

    def write(self, tx: Tx, entry: AuditEntry, *, authenticated: bool, known_route: bool) -> None:
        if authenticated and entry.outcome != "RATE_LIMITED":
            tx.audit(entry)
        else:
            self._anonymous.record(tx, entry, known_route)

    def flush(self, tx: Tx) -> None:
        """Write the counts of folded refusals now (the server's upkeep does this each minute)."""
        self._anonymous.flush(tx)

    def procedure_call(self, record: CallRecord, conn: sqlite3.Connection) -> None:
        """The procedure server's hook: in the call's own transaction when it was applied."""
        session = record.caller.data if record.caller is not None else None
        assert session is None or isinstance(session, Session)
        operation = record.procedure_id.removeprefix("domain:")
        entry = AuditEntry(
            at=iso_seconds(record.at),
            operation=operation,
            outcome=record.outcome,
            http_status=record.status,
            user_id=session.principal.user_id if session else None,
            tenant=session.principal.tenant if session else None,
            input=record.input,
            reason="replayed" if record.replayed else record.reason,
            invocation_id=record.invocation_id,
            confirmation_id=record.confirmation_id,
            attempts=1 + record.repeats,
            channel=session.channel if session else None,
        )
        self.write(Tx(conn), entry, authenticated=session is not None, known_route=operation in SERVED_NAMES)


# ---------------------------------------------------------------------------------------- routes

Work = Callable[[Tx, Principal, Json], Json]


def _session_body(_tx: Tx, who: Principal, _input: Json) -> Json:
    allowed: list[Json] = list(allowed_procedures(PERMISSIONS[who.role]))
    return {
        "user": {"id": who.user_id, "name": who.name, "role": who.role},
        "tenant": who.tenant,
        "tenantName": who.tenant_name,
        "allowedProcedures": allowed,
    }


def _listing_body(tx: Tx, who: Principal, params: Json) -> Json:
    assert isinstance(params, dict)
    query = parse_listing(params)
    where_text = (query.text or "").strip() or None
    where_city = (query.city or "").strip() or None
    devices, total = tx.query_devices(who.tenant, DeviceFilter(query.status, where_city, where_text), query.limit)
    rows: list[Json] = [d.to_json() for d in devices]
    return {"devices": rows, "total": total}


@dataclass(frozen=True, slots=True)
class _Route:
    operation: str
    method: str
    work: Work | None  # None: no such route


class AppRoutes:
    """``GET /api/session``, ``GET /api/devices`` and every other ``/api/...`` path (404)."""

    def __init__(
        self,
        store: Store,
        authenticator: Authenticator,
        audit: AuditLog,
        *,
        rate_limit: RateLimit,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._store = store
        self._auth = authenticator
        self._audit = audit
        # Held in the store when it can (every worker on one database spends one budget).
        shared = callable(getattr(store.invocations, "take_token", None))
        self._limiter: RateLimiter | SharedRateLimiter = (
            SharedRateLimiter(rate_limit, cast(Any, store.invocations)) if shared else RateLimiter(rate_limit)
        )
        self._transient: tuple[type[BaseException], ...] = tuple(
            getattr(store.invocations, "transient_errors", (sqlite3.OperationalError,))
        )
        self._clock = clock

    async def session(self, request: Request) -> Response:
        return await run_in_threadpool(self._handle, request, _Route("session", "GET", _session_body))

    async def devices(self, request: Request) -> Response:
        return await run_in_threadpool(self._handle, request, _Route("devices.list", "GET", _listing_body))

    async def unknown(self, request: Request) -> Response:
        path = re.sub(r"[^A-Za-z0-9._/~-]", "?", request.url.path)[:100]
        return await run_in_threadpool(self._handle, request, _Route(f"{request.method} {path}", "", None))

    def _handle(self, request: Request, route: _Route) -> Response:
        session: Session | None = None
        params: Json = None
        try:
            session = self._auth.session(request.headers)
            # The app's routes have their own budget beside the procedure server's ("app:" keys).
            wait = self._limiter.take("app:" + rate_limit_key(session, request.client.host if request.client else "?"))
            if wait is not None:
                raise Refusal(rate_limited(wait))
            if session is None:
                raise Refusal(not_authenticated())
            if route.work is None:
                raise route_not_found()
            if request.method != route.method:
                refusal = method_not_allowed(route.method)
                self._refused(session, route, None, refusal)
                return refusal_response(refusal, {"Allow": route.method})
            if route.operation == "devices.list":
                params = dict(listing_params(request.url.query))  # type: ignore[arg-type]
            return JSONResponse(self._run(session, route, params))
        except Refusal as refusal:
            self._refused(session, route, params, refusal)
            return refusal_response(refusal)
        except self._transient:
            log.warning("storage busy or unavailable in %s", route.operation, exc_info=True)
            return self._failed(session, route, transient=True)
        except Exception:  # a defect: still answer typed (and audit if possible), never drop the connection
            log.exception("unexpected error in %s", route.operation)
            return self._failed(session, route, transient=False)

    def _failed(self, session: Session | None, route: _Route, *, transient: bool) -> Response:
        failure = Refusal(execution_failed(transient=transient))
        self._refused(session, route, None, failure)
        return refusal_response(failure)

    def _run(self, session: Session, route: _Route, params: Json) -> Json:
        assert route.work is not None
        work = route.work

        def in_transaction(tx: Tx) -> Json:
            body = work(tx, session.principal, params)
            self._audit.write(tx, self._entry(session, route, params, "ok", 200, None), authenticated=True,
                              known_route=True)
            return body

        return self._store.run(in_transaction)

    def _entry(
        self, session: Session | None, route: _Route, params: Json, outcome: str, status: int, reason: str | None
    ) -> AuditEntry:
        who = session.principal if session else None
        return AuditEntry(
            at=iso_seconds(self._clock()),
            operation=route.operation,
            outcome=outcome,
            http_status=status,
            user_id=who.user_id if who else None,
            tenant=who.tenant if who else None,
            input=None if params is None or who is None else canonical_json(params),
            reason=reason,
            channel=session.channel if session else None,
        )

    def _refused(self, session: Session | None, route: _Route, params: Json, refusal: Refusal) -> None:
        details: dict[str, Any] = dict(refusal.error.details or {})
        reason = details.get("reason")
        entry = self._entry(session, route, params, refusal.error.code, refusal.status,
                            reason if isinstance(reason, str) else None)
        try:
            self._store.run(lambda tx: self._audit.write(tx, entry, authenticated=session is not None,
                                                         known_route=route.work is not None))
        except Exception:  # the store down, or text it cannot hold: the refusal is still answered
            log.exception("could not audit a refused call to %s", route.operation)

