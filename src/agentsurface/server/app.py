"""The procedure server: an ASGI application (Starlette) serving procedure contracts.

Every call goes through the same steps and stops at the first refusal, answered as typed JSON:

1. authenticate through the app's hook                       → 401 NOT_AUTHENTICATED
2. rate limit per caller (per address when anonymous)         → 429 RATE_LIMITED
3. resolve the procedure                                      → 404 CAPABILITY_NOT_FOUND
4. authorize by the procedure's declared permissions          → 403 NOT_AUTHORIZED {origin: server}
5. read the envelope (size, type, UTF-8, JSON, depth) and re-validate the input with the
   contract's own schema                                      → 400/413/415 INVALID_INPUT {issues}
6. server-side approval, when the procedure requires it       → 428 CONFIRMATION_REQUIRED {origin: server}
   with a server-minted challenge beside the error (challenges/), or 403 CONFIRMATION_INVALID
7. apply once per (caller, invocation id), in one transaction with its record; the approval's
   challenge is spent in that same transaction              → replay, or 409 INVOCATION_CONFLICT,
                                                              or 403 CONFIRMATION_INVALID

Nothing the page asserts is trusted: the caller comes from the hook, the input is re-validated,
the tenant is the caller's. Messages are agent-safe; internals are logged, never sent.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from .. import CapabilityFailure, DefinitionError
from .._core.errors import AgentSurfaceError
from .._core.jsonvalue import to_json_value
from .._core.records import record
from .._core.schemas.schema import Invalid, validate_output
from ..bridge.wire import (
    CALLABLE_PATH,
    CHALLENGES_PREFIX,
    DOMAIN_PREFIX,
    MANIFEST_PATH,
    PROCEDURES_PREFIX,
    error_body,
    http_status,
    manifest_json,
)
from . import challenges
from .audit_trail import AuditTrail
from .config import Audit, Authenticate, ServerLimits
from .envelope import read_envelope
from .errors import (
    Refusal,
    capability_error,
    execution_failed,
    invalid_input,
    not_authenticated,
    not_authorized,
    not_found,
    rate_limited,
    refusal_response,
    retry_after_header,
    sanitized,
)
from .evidence import VerifyConfirmation, check_evidence
from .procedures import Caller, ConfirmationEvidence, ProcedureCall, ServedProcedure
from .ratelimit import RateLimit, RateLimiter, SharedRateLimiter
from .stores import InvocationKey, InvocationStore, Outcome, Settlement, missing_members
from .throttle import RefusalSampler
from .upkeep import Upkeep

log = logging.getLogger("agentsurface.server")

READY_PATH = "/ready"


@record(frozen=False)
class _Call:
    """A request on its way through the steps, and what its audit record will say."""

    procedure_id: str
    caller: Caller | None = None
    invocation_id: str | None = None
    input: str | None = None
    confirmation: ConfirmationEvidence | None = None
    limit_key: str = ""
    request: Request | None = None


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _body_never_arrived() -> Response:
    """A client that went away before its whole body arrived (it disconnected, or the server's
    body deadline closed the connection): one log line, nothing applied, and an answer nobody
    reads (the connection is gone)."""
    log.warning("a request's body did not arrive in full (the client disconnected, or missed the body "
                "deadline); nothing was applied")
    return Response(status_code=400)


class ProcedureServer:
    """Serves ``procedures`` as an ASGI app; mount it (``Mount("/api/agent", server)``) or run
    it with uvicorn directly. The store holds the invocation records and the app's tables."""

    def __init__(
        self,
        procedures: Iterable[ServedProcedure],
        *,
        authenticate: Authenticate,
        store: InvocationStore,
        rate_limit: RateLimit | None = None,
        limits: ServerLimits | None = None,
        audit: Audit | None = None,
        verify_confirmation: VerifyConfirmation | None = None,
        verify_presence: challenges.VerifyPresence | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.procedures: dict[str, ServedProcedure] = {}
        for served in procedures:
            if not isinstance(served, ServedProcedure):
                raise DefinitionError("INVALID_DEFINITION", f"{served!r} was not made by serve()")
            if served.id in self.procedures:
                raise DefinitionError("DUPLICATE_CAPABILITY", f"{served.id!r} is served twice")
            self.procedures[served.id] = served
        if not callable(authenticate):
            raise DefinitionError("INVALID_DEFINITION", "authenticate must be callable")
        self._authenticate_hook = authenticate
        missing = missing_members(store)
        if missing:
            raise DefinitionError(
                "INVALID_DEFINITION",
                f"the store lacks {', '.join(missing)} of InvocationStore (agentsurface.server.stores)",
            )
        self.store = store
        self.limits = limits or ServerLimits()
        self._limiter: RateLimiter | SharedRateLimiter | None = None
        if rate_limit is not None:  # all workers on one store spend one budget
            self._limiter = SharedRateLimiter(rate_limit, store)
        self._transient: tuple[type[BaseException], ...] = tuple(store.transient_errors)
        self._sampler = RefusalSampler()
        self._trail = AuditTrail(audit, store, self._sampler, clock)
        self._verify_confirmation = verify_confirmation
        self._verify_presence = verify_presence
        self._clock = clock
        self._apply_threads: anyio.CapacityLimiter | None = None
        self._upkeep = Upkeep(store, audit, self._sampler, self.limits, clock)
        self.manifest = manifest_json([p.info() for p in self.procedures.values()])
        calls = Route(PROCEDURES_PREFIX + "{path:path}", self._call, methods=["POST"])
        calls.path_regex = re.compile(calls.path_regex.pattern, re.DOTALL)  # %0A in a name: typed 404
        asks = Route(CHALLENGES_PREFIX + "{path:path}", self._ask_challenge, methods=["POST"])
        asks.path_regex = re.compile(asks.path_regex.pattern, re.DOTALL)
        self.app = Starlette(
            routes=[
                Route(MANIFEST_PATH, self._manifest, methods=["GET"]),
                Route(CALLABLE_PATH, self._callable, methods=["GET"]),
                Route(READY_PATH, self._ready, methods=["GET"]),
                calls,
                asks,
            ],
            exception_handlers={HTTPException: self._http_error, Exception: self._internal_error},
        )
        # No redirect to "path/": it would build an absolute Location from the request's Host.
        self.app.router.redirect_slashes = False

    def mount(self, path: str) -> Mount:
        """``Mount(path, self)`` for an app's routes, matching names with any character (an
        encoded control character reaches the server and gets its typed JSON refusal)."""
        mounted = Mount(path, self)
        mounted.path_regex = re.compile(mounted.path_regex.pattern, re.DOTALL)
        return mounted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    # ------------------------------------------------------------------ routes

    async def _manifest(self, request: Request) -> Response:
        return JSONResponse(self.manifest, headers={"Cache-Control": "no-cache"})

    async def _callable(self, request: Request) -> Response:
        """The served procedures this caller may call (their permissions held): the page offers
        its agent only these. Authenticated and rate-limited as a call is; nothing audited."""
        try:
            caller = await self._caller(request, _Call(CALLABLE_PATH))
        except Refusal as refusal:
            return JSONResponse(
                error_body(refusal.error), refusal.status, headers=retry_after_header(refusal.error)
            )
        allowed = sorted(pid for pid, served in self.procedures.items() if served.permissions <= caller.permissions)
        return JSONResponse({"procedures": allowed}, headers={"Cache-Control": "no-store"})

    async def _ready(self, request: Request) -> Response:
        """Readiness for a load balancer: 200 when the store answers, else a transient 503."""
        try:
            await run_in_threadpool(self.store.check)
        except Exception:
            log.warning("readiness: the store does not answer", exc_info=True)
            refusal = Refusal(execution_failed(transient=True), status=503)
            return refusal_response(refusal)
        return JSONResponse({"ok": True, "store": "ready"}, headers={"Cache-Control": "no-store"})

    async def _call(self, request: Request) -> Response:
        call = _Call(DOMAIN_PREFIX + str(request.path_params["path"]), request=request)
        self._upkeep.maybe_start()
        try:
            served = await self._admit(request, call)
            value = await self._read_input(request, call, served)
            limits = self.limits
            await self._challenge_if_needed(call, served)
            check_evidence(
                call.confirmation,
                served,
                call.caller,
                self._clock(),
                limits.confirmation_max_age,
                limits.clock_skew,
                self._verify_confirmation,
            )
            # A pool of its own: an implementation that calls the app's route waits for that
            # route's own worker thread, which must never queue behind the calls holding it.
            if self._apply_threads is None:
                self._apply_threads = anyio.CapacityLimiter(40)
            settlement = await anyio.to_thread.run_sync(
                self._apply, call, served, value, limiter=self._apply_threads
            )
        except Refusal as refusal:
            await self._trail.refusal(call, refusal)
            body = {**refusal.extra, **error_body(refusal.error, call.invocation_id)}
            return JSONResponse(body, refusal.status, headers=retry_after_header(refusal.error))
        except ClientDisconnect:
            return _body_never_arrived()
        if settlement.kind == "conflict":
            conflict = Refusal(
                capability_error(
                    "INVOCATION_CONFLICT",
                    "This invocation id was already used with a different input. Use a new id.",
                    reason="input-mismatch",
                )
            )
            await self._trail.refusal(call, conflict)
            return JSONResponse(error_body(conflict.error, call.invocation_id), conflict.status)
        outcome = settlement.outcome
        assert outcome is not None
        if settlement.kind == "replayed":
            await self._trail.replay(call, outcome)
            return JSONResponse({**outcome.body, "replayed": True}, outcome.status)
        return JSONResponse(outcome.body, outcome.status)

    # ------------------------------------------------------------------ steps

    async def _admit(self, request: Request, call: _Call) -> ServedProcedure:
        """Steps 1-4: who is calling, how often, what, and whether they may."""
        caller = await self._caller(request, call)
        served = self.procedures.get(call.procedure_id)
        if served is None:
            raise Refusal(not_found())
        if not served.permissions <= caller.permissions:
            raise Refusal(not_authorized())
        return served

    async def _caller(self, request: Request, call: _Call) -> Caller:
        """Steps 1-2: who is calling (refused when nobody), and how often."""
        caller, refused = await self._authenticate(request)
        call.caller = caller
        client = request.client.host if request.client else "unknown"
        call.limit_key = f"caller:{caller.scope}" if caller else f"anon:{client}"
        if self._limiter is not None:
            limiter = self._limiter
            try:
                if isinstance(limiter, RateLimiter):  # in memory: no thread needed
                    wait = limiter.take(call.limit_key)
                else:
                    wait = await run_in_threadpool(limiter.take, call.limit_key)
            except self._transient:
                log.warning("rate limit: the store is busy or unavailable", exc_info=True)
                raise Refusal(execution_failed(transient=True)) from None
            if wait is not None:
                raise Refusal(rate_limited(wait))
        if caller is None:
            raise refused or Refusal(not_authenticated())
        return caller

    async def _authenticate(self, request: Request) -> tuple[Caller | None, Refusal | None]:
        """The caller, or None and the hook's own typed refusal if it raised one (answered
        after the rate limit, like any unknown caller)."""
        try:
            hook = self._authenticate_hook
            if inspect.iscoroutinefunction(hook):
                caller = await hook(request)
            else:
                caller = await run_in_threadpool(hook, request)
                if inspect.isawaitable(caller):
                    caller = await caller
        except Refusal as refusal:
            if refusal.error.code not in ("NOT_AUTHENTICATED", "NOT_AUTHORIZED"):
                log.error("the authenticate hook refused with %s", refusal.error.code)
                return None, Refusal(execution_failed(transient=False))
            return None, refusal  # the app's own answer: its dependency's 403 is NOT_AUTHORIZED
        except self._transient:
            log.warning("the authenticate hook could not reach the store", exc_info=True)
            raise Refusal(execution_failed(transient=True)) from None
        except Exception:
            log.exception("the authenticate hook failed")
            raise Refusal(execution_failed(transient=False)) from None
        if caller is not None and not isinstance(caller, Caller):
            log.error("the authenticate hook returned %r, not a Caller or None", type(caller).__name__)
            raise Refusal(execution_failed(transient=False))
        return caller, None

    async def _read_input(self, request: Request, call: _Call, served: ServedProcedure) -> Any:
        """Step 5: the envelope, strictly parsed; the input re-validated by the contract."""
        return await read_envelope(request, self.limits, served, call)

    async def _ask_challenge(self, request: Request) -> Response:
        """``POST <base>/challenges/<path>``: the approval challenge for the call in the body (the
        same envelope, the same steps 1-5), minted without a refusal on the way."""
        call = _Call(DOMAIN_PREFIX + str(request.path_params["path"]))
        self._upkeep.maybe_start()
        try:
            served = await self._admit(request, call)
            await self._read_input(request, call, served)
            minted = await self._mint(call, served) if served.require_confirmation else None
        except Refusal as refusal:
            await self._trail.refusal(call, refusal)
            return JSONResponse(error_body(refusal.error, call.invocation_id), refusal.status,
                                headers=retry_after_header(refusal.error))
        except ClientDisconnect:
            return _body_never_arrived()
        return JSONResponse(
            {"ok": True, "challenge": None if minted is None else minted.to_wire()},
            headers={"Cache-Control": "no-store"},
        )

    async def _challenge_if_needed(self, call: _Call, served: ServedProcedure) -> None:
        """Step 6a: evidence that answers no server-minted challenge gets one (and is refused)."""
        evidence = call.confirmation
        if not served.require_confirmation or (evidence is not None and evidence.challenge is not None):
            return
        raise challenges.required(served, await self._mint(call, served))

    async def _mint(self, call: _Call, served: ServedProcedure) -> challenges.Challenge:
        caller = call.caller
        assert caller is not None and call.input is not None
        now = self._clock()
        save = partial(self.store.save_challenge, cap=self.limits.live_challenges, now=now)
        try:
            # In a worker thread: the approval level may ask the app's database (does this person
            # have a passkey: agentsurface.server.passkeys).
            minted = await run_in_threadpool(challenges.mint, served, caller, call.input, now, self.limits.challenge_ttl)
            kept = await run_in_threadpool(save, minted)
        except self._transient:
            log.warning("could not mint or store an approval challenge: the store is busy", exc_info=True)
            raise Refusal(execution_failed(transient=True)) from None
        except Exception:
            log.exception("could not mint or store an approval challenge")
            raise Refusal(execution_failed(transient=False)) from None
        if isinstance(kept, datetime):  # the caller holds `cap` live ones: spend or let one expire
            wait_ms = max(1000, int((kept - now).total_seconds() * 1000) + 1)
            raise Refusal(rate_limited(wait_ms, reason="challenge-cap"))
        return kept  # what was minted, or the live one of the same call asked again

    def _apply(self, call: _Call, served: ServedProcedure, value: Any) -> Settlement:
        """Step 7 (in a worker thread): run once, in one transaction with the record and audit."""
        caller, invocation_id = call.caller, call.invocation_id
        assert caller is not None and invocation_id is not None and call.input is not None
        recorded = served.contract.effect != "server-query"  # reads are safe to run again
        # The request's fingerprint for replays, and what an approval challenge is bound to.
        call_digest = challenges.input_digest(served.id, call.input)

        def work(db: Any) -> Outcome:
            if served.require_confirmation:
                assert call.confirmation is not None and call.input is not None
                refused = challenges.settle(
                    self.store,
                    db,
                    call.confirmation,
                    caller,
                    served.id,
                    call_digest,
                    invocation_id,
                    self._clock(),
                    self._verify_presence,
                )
                if refused is not None:
                    error = challenges.invalid(refused).error
                    return Outcome(http_status(error), error_body(error, invocation_id), keep=False, record=False)
            ctx = ProcedureCall(
                served.id, caller, invocation_id, db, self._clock(), call.confirmation, call.request
            )
            try:
                output = self._output(served, served.implementation(ctx, value))
            except CapabilityFailure as exc:
                # A refusal applied nothing: it is not recorded, so a retry gets a fresh answer.
                error = sanitized(exc.error)
                return Outcome(http_status(error), error_body(error, invocation_id), keep=False, record=False)
            body: dict[str, Any] = {"ok": True, "invocationId": invocation_id, "output": output}
            return Outcome(200, body, True, recorded)

        def finish(db: Any, outcome: Outcome) -> None:
            self._trail.within(call, outcome, db)

        try:
            if recorded:
                key = InvocationKey(caller.scope, invocation_id, served.id)
                return self.store.execute_once(key, call_digest, work, finish)

            def read(db: Any) -> Outcome:
                outcome = work(db)
                finish(db, outcome)
                return outcome

            return Settlement("applied", self.store.run(read))
        except self._transient:
            log.warning("storage busy or unavailable in %s; nothing was applied", served.id, exc_info=True)
            raise Refusal(execution_failed(transient=True)) from None
        except Exception:
            log.exception("%s failed; nothing was applied", served.id)
            raise Refusal(execution_failed(transient=False)) from None

    @staticmethod
    def _output(served: ServedProcedure, raw: Any) -> Any:
        schema = served.contract.output
        if schema is None:
            return to_json_value(raw)
        result = validate_output(schema, raw)
        if isinstance(result, Invalid):
            raise _InvalidOutput(f"{served.id} returned output its contract does not allow: {result.issues}")
        return result.json

    # ------------------------------------------------------------------ audit

    def flush_refusals(self) -> int:
        """Audit the refusals held back by sampling now, one record per caller and code (the
        background upkeep does this every ``prune_every`` seconds). Returns how many records."""
        return self._upkeep.flush_refusals()

    # ------------------------------------------------------------------ retention

    def prune_now(self) -> int:
        """Drop the invocation records past the retention now (returns how many)."""
        return self._upkeep.prune_now()

    def forget_expired_challenges(self) -> int:
        """Drop the approval challenges past their expiry now (the background upkeep does this
        every ``prune_every`` seconds). Returns how many."""
        return self._upkeep.forget_challenges()

    # ------------------------------------------------------------------ HTTP-level errors

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            error = invalid_input("This path does not accept that method.", [("/", "method not allowed")])
        elif status == 404:
            error = not_found()
        else:
            error = execution_failed(transient=False)
        allow = exc.headers.get("Allow") if isinstance(exc, HTTPException) and exc.headers else None
        return JSONResponse(error_body(error), status, headers={"Allow": allow} if allow else None)

    async def _internal_error(self, request: Request, exc: Exception) -> Response:
        log.error("unhandled error in the procedure server", exc_info=exc)
        return JSONResponse(error_body(execution_failed(transient=False)), 500)


class _InvalidOutput(AgentSurfaceError):
    pass


__all__ = ["READY_PATH", "ProcedureServer"]
