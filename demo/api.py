"""The devices API, independent of the HTTP server. The server is the authority: it re-checks
every call and trusts nothing the browser (or an agent in it) says.

Every call goes through the same phases, in this order, and stops at the first refusal:

1. authenticate (``Authorization: Bearer <token>``)          → 401 NOT_AUTHENTICATED
2. rate limit (per user, with a separate budget for the user's agent, whose calls carry
   ``X-Agent-Invocation-Id``; per client address when anonymous) → 429 RATE_LIMITED
3. resolve the route and its method                           → 404 CAPABILITY_NOT_FOUND, 405 INVALID_INPUT
4. authorize the caller's role                                → 403 NOT_AUTHORIZED {origin: "server"}
5. read and validate the input (size, JSON, types, keys)      → 413/415/400 INVALID_INPUT {issues}
6. execute in one transaction, scoped to the caller's tenant; ids that are not the tenant's
   (nonexistent or another tenant's, indistinguishably)       → 404 PRECONDITION_FAILED {reason: "unknown-device"}
7. audit: every authenticated call, accepted or refused, gets one row; an accepted change and its
   row commit together. Refused anonymous calls are counted, not listed: one row per outcome and
   operation per minute, whose ``attempts`` says how many calls it stands for (so an anonymous
   caller cannot grow the database at will).

A request that breaks an assumption of the code above still gets a typed 500 and its audit row.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Protocol, TypeAlias
from urllib.parse import parse_qsl, urlsplit

from .db import AuditEntry, Change, Json, Principal, Role, Store, Tx, UnknownDevicesError, canonical_json, iso
from .errors import (
    ApiError,
    Issue,
    execution_failed,
    invalid_input,
    method_not_allowed,
    not_authenticated,
    not_authorized,
    rate_limited,
    route_not_found,
    unknown_devices,
)
from .inputs import (
    LIST_LIMIT_DEFAULT,
    LIST_LIMIT_MAX,
    MAX_BODY_BYTES,
    QueryInput,
    key_path,
    parse_disable,
    parse_enable,
    parse_json_body,
    parse_query,
    parse_rename,
)

log = logging.getLogger("demo.api")

TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{1,256}")
CORRELATION_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")
ROLE_RANK: dict[Role, int] = {"viewer": 0, "operator": 1, "admin": 2}

# ---------------------------------------------------------------------------------------- procedures

Operation: TypeAlias = Callable[[Tx], Json]
"""A validated call, ready to run inside a transaction."""


def _listing(tx: Tx, who: Principal, args: QueryInput) -> Json:
    devices, total = tx.query_devices(who.tenant, args.where, args.limit)
    rows: list[Json] = [d.to_json() for d in devices]
    return {"devices": rows, "total": total}


def _change(change: Change, done: str, already: str) -> Json:
    rows: list[Json] = [d.to_json() for d in change.devices]
    return {done: change.changed, already: len(change.devices) - change.changed, "devices": rows}


def prepare_query(body: Json, who: Principal, now: str) -> Operation:
    args = parse_query(body)
    return lambda tx: _listing(tx, who, args)


def prepare_rename(body: Json, who: Principal, now: str) -> Operation:
    args = parse_rename(body)
    return lambda tx: {"device": tx.rename(who.tenant, args.device_id, args.name, now).to_json()}


def prepare_disable(body: Json, who: Principal, now: str) -> Operation:
    args = parse_disable(body)
    return lambda tx: _change(tx.disable(who.tenant, args.device_ids, args.reason, now), "disabled", "alreadyDisabled")


def prepare_enable(body: Json, who: Principal, now: str) -> Operation:
    args = parse_enable(body)
    return lambda tx: _change(tx.enable(who.tenant, args.device_ids, now), "enabled", "alreadyEnabled")


class Prepare(Protocol):
    """Validate a body for a caller; return the operation to run (raises INVALID_INPUT)."""

    def __call__(self, body: Json, who: Principal, now: str, /) -> Operation: ...


@dataclass(frozen=True, slots=True)
class Procedure:
    name: str
    min_role: Role
    prepare: Prepare


PROCEDURES: dict[str, Procedure] = {
    p.name: p
    for p in (
        Procedure("devices.query", "viewer", prepare_query),
        Procedure("devices.rename", "operator", prepare_rename),
        Procedure("devices.disable", "operator", prepare_disable),
        Procedure("devices.enable", "operator", prepare_enable),
    )
}

# ---------------------------------------------------------------------------------------- rate limit


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A token bucket per caller: ``burst`` calls at once, refilled at ``per_second``."""

    burst: int = 60
    per_second: float = 1.0


class RateLimiter:
    MAX_KEYS = 10_000

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        if limit.burst < 1 or limit.per_second <= 0:
            raise ValueError("a rate limit needs burst >= 1 and per_second > 0")
        self._limit = limit
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str) -> int | None:
        """Spend one call for ``key``: ``None`` if allowed, else milliseconds until one is."""
        with self._lock:
            now = self._clock()
            tokens, when = self._buckets.get(key, (float(self._limit.burst), now))
            tokens = min(float(self._limit.burst), tokens + (now - when) * self._limit.per_second)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
            if len(self._buckets) > self.MAX_KEYS:
                self._forget_full(now)
            return None if allowed else max(1, math.ceil((1.0 - tokens) / self._limit.per_second * 1000))

    def _forget_full(self, now: float) -> None:
        refill_time = self._limit.burst / self._limit.per_second
        for key, (_, when) in list(self._buckets.items()):
            if now - when >= refill_time:
                del self._buckets[key]


def rate_limit_key(principal: Principal | None, client: str, headers: Mapping[str, str]) -> str:
    """Whose budget a call spends. The page's agent executor marks its calls with
    ``X-Agent-Invocation-Id``; they get their own budget so the agent never starves the person."""
    if principal is None:
        return f"anon:{client}"
    return f"agent:{principal.user_id}" if "x-agent-invocation-id" in headers else f"user:{principal.user_id}"


# ---------------------------------------------------------------------------------------- anonymous audit


class AnonymousRefusals:
    """Folds refused anonymous calls into one audit row per (outcome, operation) per window.

    The first refusal of a window writes a row; later ones add to its ``attempts``. Operations are
    the API's own names (unknown routes share one), so the rows per window are bounded.
    """

    WINDOW_SECONDS = 60.0
    UNKNOWN_ROUTE = "unknown-route"

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._window_start: float | None = None
        self._rows: dict[tuple[str, str], int] = {}  # (outcome, operation) -> audit row id
        self._lock = threading.Lock()

    def record(self, store: Store, entry: AuditEntry, known_route: bool) -> None:
        operation = entry.operation if known_route else self.UNKNOWN_ROUTE
        key = (entry.outcome, operation)
        with self._lock:  # one writer at a time, so two threads never open two rows for one key
            now = self._monotonic()
            if self._window_start is None or now - self._window_start >= self.WINDOW_SECONDS:
                self._window_start, self._rows = now, {}
            row_id = self._rows.get(key)
            with store.transaction() as tx:
                if row_id is None:
                    self._rows[key] = tx.audit(replace(entry, operation=operation, input=None))
                else:
                    tx.count_attempt(row_id)


# ---------------------------------------------------------------------------------------- requests


class Body(Protocol):
    """The request body, read only if the API decides it is worth reading."""

    @property
    def declared_length(self) -> int: ...

    def read(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class ApiRequest:
    method: str
    target: str  # path and query string, as sent
    headers: Mapping[str, str]  # lower-case names
    client: str  # the peer address (rate limiting of anonymous callers)
    body: Body


@dataclass(frozen=True, slots=True)
class ApiResponse:
    status: int
    payload: Json
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Call:
    """One request on its way through the phases, and what its audit row will say."""

    request: ApiRequest
    operation: str
    query: str
    principal: Principal | None = None
    input: str | None = None

    @property
    def who(self) -> Principal:
        if self.principal is None:  # pragma: no cover - authentication runs first
            raise RuntimeError("call not authenticated")
        return self.principal


Route: TypeAlias = Callable[[_Call], Json]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _correlation(value: str | None) -> str | None:
    """Agent correlation headers are recorded for information only, if they look like ids."""
    return value if value is not None and CORRELATION_ID.fullmatch(value) else None


def _operation_label(method: str, path: str) -> str:
    return f"{method} {re.sub(r'[^A-Za-z0-9._/~-]', '?', path)[:100]}"


class Api:
    """Routes, checks, executes and audits API requests against a :class:`Store`."""

    def __init__(
        self,
        store: Store,
        *,
        rate_limit: RateLimit | None = None,
        clock: Callable[[], datetime] = _utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self._limiter = RateLimiter(rate_limit or RateLimit(), monotonic)
        self._anonymous = AnonymousRefusals(monotonic)
        self._clock = clock

    def handle(self, request: ApiRequest) -> ApiResponse:
        raw_path, _, query = request.target.partition("?")
        path = urlsplit(raw_path).path
        operation, method, route = self._resolve(path)
        call = _Call(request, operation or _operation_label(request.method, path), query)
        try:
            self._authenticate(call)
            if route is None:
                raise route_not_found(sorted(PROCEDURES))
            if request.method != method:
                raise method_not_allowed(method)
            payload = route(call)
        except ApiError as error:
            self._audit_refusal(call, error, known_route=route is not None)
            return ApiResponse(error.status, error.body(), error.headers)
        except Exception:  # a defect: still answer (typed) and audit, never drop the connection
            log.exception("unexpected error in %s", call.operation)
            failure = execution_failed(transient=False)
            call.input = None
            self._audit_refusal(call, failure, known_route=route is not None)
            return ApiResponse(failure.status, failure.body(), failure.headers)
        return ApiResponse(200, payload)

    # ---------------------------------------------------------------- phases
    def _resolve(self, path: str) -> tuple[str | None, str, Route | None]:
        """(operation name, allowed method, route) for ``path``; no route if there is none."""
        if path == "/api/session":
            return "session", "GET", self._session
        if path == "/api/devices":
            return "devices.list", "GET", self._list_devices
        prefix = "/api/procedures/"
        procedure = PROCEDURES.get(path[len(prefix):]) if path.startswith(prefix) else None
        if procedure is not None:
            return procedure.name, "POST", lambda call: self._procedure(procedure, call)
        return None, "", None

    def _authenticate(self, call: _Call) -> None:
        """Identify the caller (kept on ``call``, so a rate-limited user is audited as that user),
        then spend one call of its budget."""
        request = call.request
        scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and TOKEN.fullmatch(token):
            with self.store.transaction() as tx:
                call.principal = tx.principal_by_token(token)
        wait = self._limiter.take(rate_limit_key(call.principal, request.client, request.headers))
        if wait is not None:
            raise rate_limited(wait)
        if call.principal is None:
            raise not_authenticated()

    @staticmethod
    def _authorize(who: Principal, operation: str, needed: Role) -> None:
        if ROLE_RANK[who.role] < ROLE_RANK[needed]:
            raise not_authorized(who.role, operation, needed)

    @staticmethod
    def _read_json(request: ApiRequest) -> Json:
        if request.body.declared_length > MAX_BODY_BYTES:
            raise invalid_input(
                [Issue("/", f"the body must be at most {MAX_BODY_BYTES} bytes")],
                413,
                "The request body is too large; send fewer or shorter values.",
            )
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise invalid_input([Issue("/", "send the body as Content-Type: application/json")], 415)
        return parse_json_body(request.body.read())

    def _execute(self, call: _Call, operation: Operation) -> Json:
        """Run ``operation`` and write its audit row in the same transaction."""
        try:
            with self.store.transaction() as tx:
                result = operation(tx)
                tx.audit(self._entry(call, "ok", 200, None))
            return result
        except UnknownDevicesError as exc:
            raise unknown_devices(exc.ids) from None
        except sqlite3.OperationalError:
            log.exception("storage error in %s", call.operation)
            raise execution_failed(transient=True) from None
        except Exception:
            log.exception("internal error in %s", call.operation)
            raise execution_failed(transient=False) from None

    # ---------------------------------------------------------------- routes
    def _session(self, call: _Call) -> Json:
        who = call.who
        allowed: list[Json] = [p.name for p in PROCEDURES.values() if ROLE_RANK[who.role] >= ROLE_RANK[p.min_role]]
        session: Json = {
            "user": {"id": who.user_id, "name": who.name, "role": who.role},
            "tenant": who.tenant,
            "tenantName": who.tenant_name,
            "allowedProcedures": allowed,
        }
        return self._execute(call, lambda _tx: session)

    def _list_devices(self, call: _Call) -> Json:
        params: dict[str, Json] = {}
        issues: list[Issue] = []
        for key, value in parse_qsl(call.query, keep_blank_values=True):
            name = "text" if key == "q" else key  # ?q= is the free-text filter
            if name in params:
                issues.append(Issue(key_path(key), "must be given once"))
            elif value != "":  # an empty filter means no filter
                params[name] = int(value) if name == "limit" and value.isascii() and value.isdigit() else value
        call.input = canonical_json(params)
        if issues:
            raise invalid_input(issues)
        args = parse_query(params, default_limit=LIST_LIMIT_DEFAULT, max_limit=LIST_LIMIT_MAX)
        who = call.who
        return self._execute(call, lambda tx: _listing(tx, who, args))

    def _procedure(self, procedure: Procedure, call: _Call) -> Json:
        try:
            self._authorize(call.who, procedure.name, procedure.min_role)
        except ApiError:
            call.input = self._input_for_audit(call.request)
            raise
        body = self._read_json(call.request)
        call.input = canonical_json(body)
        operation = procedure.prepare(body, call.who, iso(self._clock()))
        return self._execute(call, operation)

    # ---------------------------------------------------------------- audit
    def _input_for_audit(self, request: ApiRequest) -> str | None:
        """What a refused caller sent, if it is small, well-formed JSON (never acted upon)."""
        try:
            return canonical_json(self._read_json(request))
        except ApiError:
            return None

    def _entry(self, call: _Call, outcome: str, status: int, reason: str | None) -> AuditEntry:
        who, headers = call.principal, call.request.headers
        return AuditEntry(
            at=iso(self._clock()),
            operation=call.operation,
            outcome=outcome,
            http_status=status,
            user_id=who.user_id if who else None,
            tenant=who.tenant if who else None,
            input=call.input,
            reason=reason,
            invocation_id=_correlation(headers.get("x-agent-invocation-id")),
            confirmation_id=_correlation(headers.get("x-agent-confirmation-id")),
        )

    def _audit_refusal(self, call: _Call, error: ApiError, *, known_route: bool) -> None:
        entry = self._entry(call, error.code, error.status, error.reason)
        try:
            if call.principal is None:
                self._anonymous.record(self.store, entry, known_route)
            else:
                with self.store.transaction() as tx:
                    tx.audit(entry)
        except (sqlite3.Error, ValueError):  # ValueError: text SQLite cannot store (lone surrogates)
            log.exception("could not audit a refused call to %s", call.operation)
