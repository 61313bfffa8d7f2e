"""The invocation pipeline. Ten phases in a fixed order; the first failure wins:

 1 identity         dedupe by (consumer key, invocation id); conflicting reuse refused
 2 resolution       capability, instance, registration, staleness tokens (hidden = not found)
 3 availability     enabled, pushed overrides, when(), discovery 'disable'
 4 authorization    pre-input policies (they cannot see agent input)
 5 effective input  locked fields, bindings, full-schema validation
 6 invoke policy    input-aware policies and confirmation over the validated effective input
 7 precondition     author's state check against live state
 8 admission        action queue / observation pool
 9 execution        handler or procedure executor with signal and timeout; a call given up on
                    stops its handler's task (signal, cancel, short grace) before settling
10 settlement       output checks, terminal cache, events and audit
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .admission import ActionQueues, ObservationAdmission, QueueFull, Release
from .audit import AuditEvent, AuditSink
from .confirmation import ConfirmationController, ConfirmationRecord, request_material
from .consumer import ANONYMOUS, Consumer
from .context import ActionContext, CancelSignal, ReadContext
from .contracts import ActionBinding, ActionContract, ObservationBinding, ObservationContract
from .errors import AgentSurfaceError, CapabilityError, error, surface_shut_down
from .events import make_event
from .identity import DedupeCache
from .invocation import MISSING, Invocation, InvocationResult, PreconditionFailure
from .jsonvalue import JsonValue, NotJsonError, canonical_json, digest, json_size, to_json_value
from .kinds import VERSION_GUARDED_EFFECTS
from .pointer import ROOT, json_pointer
from .policies import AuditPolicy
from .policy import Policy, PolicyContext, as_decision
from .registration import CapabilityEntry, Registration
from .schema import Invalid, Issue, Schema, Valid
from .snapshot import availability, discovery, iso, policy_context

if TYPE_CHECKING:
    from .registry import AgentSurfaceRegistry

log = logging.getLogger("agent_surface")

ProcedureExecutor = Callable[[str, JsonValue, ActionContext], Awaitable[JsonValue] | JsonValue]
MAX_INPUT_BYTES = 262_144
# Seconds a handler whose call was given up on (timeout, cancel, unmount, disposal) has to unwind
# after its task is cancelled, before the call settles saying whether it stopped.
HANDLER_STOP_GRACE = 0.25
HandlerFate = Literal["stopped", "unknown"]


class _HandlerCancelled(Exception):
    """Internal: the handler's own task ended cancelled without the pipeline asking."""


class _Stop(Exception):
    """Internal: a phase failed with this agent-facing error."""

    def __init__(self, err: CapabilityError) -> None:
        self.err = err


def _fail(code: Any, message: str, retry: Any = None, **details: Any) -> _Stop:
    return _Stop(error(code, message, retry, **details))


@dataclass(slots=True)
class _Call:
    """Everything the phases learn about one invocation."""

    request: Invocation
    invocation_id: str
    consumer: Consumer
    signal: CancelSignal  # what the handler sees as ctx.signal
    timeout: float | None
    # Aborting ``settle`` settles the invocation now (timeout, external cancel, disposal,
    # unmount of a non-navigation call) and also aborts ``signal``. A navigation's unmount
    # aborts only ``signal``: the handler may abandon, but the router's answer settles it.
    settle: CancelSignal = field(default_factory=CancelSignal)
    started: float = 0.0
    start_version: int = 0
    settled: bool = False
    audit_policies: list[AuditPolicy] = field(default_factory=list)
    reg: Registration | None = None
    entry: CapabilityEntry | None = None
    value: Any = None
    effective: JsonValue = None
    confirmation: ConfirmationRecord | None = None
    queue_wait_ms: float | None = None
    execution_ms: float | None = None


class Invoker:
    """Runs invocations for one registry (created on first use)."""

    def __init__(self, registry: AgentSurfaceRegistry, audit: AuditSink) -> None:
        self.registry = registry
        limits = registry.limits
        self.audit_sink = audit
        self.dedupe = DedupeCache(limits.dedupe_cache_size, limits.dedupe_cache_ttl, registry.now)
        self.actions = ActionQueues()
        self.observations = ObservationAdmission(
            limits.max_concurrent_observations_per_consumer,
            limits.max_concurrent_observations_total,
            limits.max_queued_observations_per_consumer,
        )
        self.confirmations = ConfirmationController(
            clock=registry.clock,
            ttl=limits.confirmation_ttl,
            max_pending=limits.max_pending_confirmations,
            new_id=lambda: _random("cnf_"),
            emit=registry._emit,
            audit=self.audit,
        )
        self.executor: ProcedureExecutor | None = None
        self.active: set[CancelSignal] = set()

    # ------------------------------------------------------------------ audit

    def audit(self, type_: str, **fields: Any) -> None:
        try:
            self.audit_sink.record(AuditEvent(at=iso(self.registry.now()), type=type_, **fields))
        except Exception:
            log.exception("audit sink failed")

    # ------------------------------------------------------------------ entry

    async def invoke(
        self,
        request: Invocation | Mapping[str, Any],
        consumer: Consumer | None,
        signal: CancelSignal | None,
        timeout: float | None,
    ) -> InvocationResult:
        req = request if isinstance(request, Invocation) else Invocation.from_json(request)
        who = consumer or ANONYMOUS
        invocation_id = req.invocation_id or _random("inv_")
        if not isinstance(invocation_id, str) or not invocation_id or len(invocation_id) > 256:
            return self._result(
                req,
                "invalid",
                error("INVALID_INPUT", "invocationId must be a non-empty string of at most 256 characters"),
            )
        malformed = _malformed_envelope(req)
        if malformed is not None:
            return self._result(
                req,
                invocation_id,
                error(
                    "INVALID_INPUT",
                    f"{malformed} must be a string. Fix the request and retry.",
                    issues=[{"path": ROOT, "message": f"{malformed} must be a string"}],
                ),
            )
        try:
            fingerprint = digest(req.fingerprint_material())
        # RecursionError: hostile nesting (or a cycle) deeper than the interpreter's stack.
        except (TypeError, ValueError, RecursionError):
            return self._result(
                req,
                invocation_id,
                error(
                    "INVALID_INPUT",
                    "The input is not plain JSON or is nested too deeply. Fix it and retry.",
                    issues=[{"path": ROOT, "message": "value is not JSON or is nested too deeply"}],
                ),
            )
        key = f"{who.key} {invocation_id}"
        state, found = self.dedupe.lookup(key, fingerprint)
        if state == "conflict":
            return self._result(
                req,
                invocation_id,
                error(
                    "INVOCATION_CONFLICT",
                    "This invocationId was already used for a different request; use a fresh invocationId.",
                    reason="id-reused-with-different-request",
                ),
            )
        if state == "join":
            assert isinstance(found, asyncio.Future)
            return await asyncio.shield(found)
        if state == "cached":
            assert isinstance(found, InvocationResult)
            return found
        future: asyncio.Future[InvocationResult] = asyncio.get_running_loop().create_future()
        self.dedupe.begin(key, fingerprint, future)
        call = _Call(req, invocation_id, who, CancelSignal(), timeout)
        call.settle.add_listener(call.signal.abort)
        external_aborted = signal is not None and signal.aborted
        remove_external = (
            signal.add_listener(lambda _r: call.settle.abort("cancelled")) if signal is not None else None
        )
        result: InvocationResult | None = None
        try:
            result = await self._run(call, external_aborted=external_aborted)
        finally:
            if remove_external is not None:
                remove_external()
            if result is None:  # the caller's task itself was cancelled mid-pipeline
                call.settle.abort("cancelled")
                result = self._result(
                    req,
                    invocation_id,
                    error("CANCELLED", "The invocation was cancelled."),
                    start_version=call.start_version,
                )
                if not call.settled:  # started is always followed by settled
                    self._settled(call, result, call.started)
            self.dedupe.finish(
                key, fingerprint, result, result.ok or (result.error is not None and result.error.cacheable)
            )
            if not future.done():
                future.set_result(result)
        return result

    def _result(
        self,
        req: Invocation,
        invocation_id: str,
        err: CapabilityError | None,
        output: JsonValue = None,
        start_version: int | None = None,
    ) -> InvocationResult:
        version = self.registry._version
        return InvocationResult(
            status="ok" if err is None else "error",
            invocation_id=invocation_id,
            capability_id=str(req.capability_id),
            surface_version=str(version),
            output=output,
            error=err,
            surface_changed=start_version is not None and version != start_version,
        )

    # ------------------------------------------------------------------ pipeline

    async def _run(self, call: _Call, external_aborted: bool) -> InvocationResult:
        registry = self.registry
        start_version = call.start_version = registry._version
        started = call.started = registry.now()
        req = call.request
        registry._emit(
            make_event(
                "invocation-started",
                invocationId=call.invocation_id,
                capabilityId=str(req.capability_id),
                consumerId=call.consumer.id,
            )
        )
        output: JsonValue = None
        err: CapabilityError | None = None
        try:
            await self._resolve(call)  # 2
            self._check_available(call)  # 3
            await self._authorize(call)  # 4
            self._effective_input(call)  # 5
            await self._invoke_policies(call)  # 6
            self._precondition(call)  # 7
            if external_aborted:
                raise _fail("CANCELLED", "The invocation was cancelled before it started.")
            release = await self._admit(call)  # 8
            try:
                output = await self._execute(call)  # 9 + 10
            finally:
                release()
        except _Stop as stop:
            err = stop.err
        except Exception:
            # A defect in a validator, policy plumbing or the library itself: the caller still
            # gets a typed result and the registry keeps serving.
            log.exception("invocation %s failed unexpectedly", call.invocation_id)
            err = error(
                "EXECUTION_FAILED",
                "The call failed inside the page; it was not completed.",
                reason="handler-error",
            )
        result = self._result(req, call.invocation_id, err, output, start_version)
        self._settled(call, result, started)
        return result

    def _settled(self, call: _Call, result: InvocationResult, started: float) -> None:
        call.settled = True
        duration = round((self.registry.now() - started) * 1000, 3)
        self.registry._emit(
            make_event(
                "invocation-settled",
                invocationId=call.invocation_id,
                capabilityId=result.capability_id,
                status=result.status,
                code=result.code,
                durationMs=duration,
            )
        )
        for policy in call.audit_policies:
            policy.forward(
                AuditEvent(
                    at=iso(self.registry.now()),
                    type="invocation-settled",
                    capability_id=result.capability_id,
                    registration_id=None if call.reg is None else call.reg.registration_id,
                    invocation_id=call.invocation_id,
                    consumer_id=call.consumer.id,
                    status=result.status,
                    code=result.code,
                    duration_ms=duration,
                    queue_wait_ms=call.queue_wait_ms,
                    execution_ms=call.execution_ms,
                    payload={"input": call.effective, "output": result.output}
                    if policy.level == "full"
                    else None,
                )
            )
        level = self._audit_level(call.entry)
        if level == "none":
            return
        payload = None
        if level == "full":
            payload = {"input": call.effective, "output": result.output}
        self.audit(
            "invocation-settled",
            capability_id=result.capability_id,
            registration_id=None if call.reg is None else call.reg.registration_id,
            invocation_id=call.invocation_id,
            consumer_id=call.consumer.id,
            status=result.status,
            code=result.code,
            duration_ms=duration,
            queue_wait_ms=call.queue_wait_ms,
            execution_ms=call.execution_ms,
            payload=payload,
        )

    @staticmethod
    def _audit_level(entry: CapabilityEntry | None) -> str:
        if entry is None:
            return "metadata"
        if entry.reference is not None:
            return str(entry.reference.contract.audit)
        assert entry.contract is not None
        return str(entry.contract.audit)

    # ---- phase 2: resolution

    async def _resolve(self, call: _Call) -> None:
        registry = self.registry
        req = call.request
        cid = req.capability_id
        if not isinstance(cid, str) or not cid:
            raise _fail(
                "CAPABILITY_NOT_FOUND", "No capability id was given. Refresh the surface and pick one."
            )
        if req.surface_id is not None and req.surface_id != registry.surface_id:
            raise _fail(
                "STALE_CAPABILITY",
                "The page was reloaded since discovery. Refresh the surface.",
                reason="surface-reloaded",
            )
        host = _memo(registry.host_context)
        visible: list[Registration] = []
        hidden: list[Registration] = []
        # The registry indexes holders by capability, already in snapshot order (AMBIGUOUS_INSTANCE
        # lists them in that order): no scan or sort of every live registration per call.
        holders = registry.holders(cid)
        for reg in holders:
            decision = discovery(reg, reg.capabilities[cid], call.consumer, host, registry.now)
            (hidden if decision.outcome == "hide" else visible).append(reg)
        try:
            target = self._pick(call, visible)
        except _Stop as stop:
            if stop.err.code == "CAPABILITY_NOT_FOUND" and hidden:
                await self._gate_refusal(call, hidden, host())
            raise
        call.reg = target
        call.entry = target.capabilities[cid]
        if (
            req.surface_version is not None
            and req.surface_version != registry.version
            and call.entry.effect in VERSION_GUARDED_EFFECTS
        ):
            raise _fail(
                "STALE_CAPABILITY",
                "The surface changed since discovery; refresh it before this irreversible call.",
                reason="surface-version-mismatch",
                liveRegistrationId=target.registration_id,
            )

    async def _gate_refusal(self, call: _Call, hidden: list[Registration], host: Mapping[str, Any]) -> None:
        """Let a gate that hid the target refuse with its own typed error.

        Built-in gates (authenticated, has_permission, tenant_boundary) hide at discovery and
        answer NOT_AUTHENTICATED / NOT_AUTHORIZED at invocation (docs/06). Only policies that
        voted ``hide`` and implement ``on_authorize`` are asked, without agent input; if none
        refuses, the call stays CAPABILITY_NOT_FOUND (hidden is indistinguishable from absent).
        """
        req = call.request
        for reg in hidden:
            if req.registration_id not in (None, reg.registration_id):
                continue
            if req.instance_id not in (None, reg.instance_id):
                continue
            entry = reg.capabilities[req.capability_id]
            base = policy_context(reg, entry, call.consumer, host, self.registry.now)
            ctx = PolicyContext(**{**_fields(base), "invocation_id": call.invocation_id})
            for policy, _scope in entry.policies:
                if type(policy).on_authorize is Policy.on_authorize:
                    continue  # not a gate
                try:
                    if as_decision(policy.on_discovery(ctx)).outcome != "hide":
                        continue
                    outcome = policy.on_authorize(ctx)
                    if inspect.isawaitable(outcome):
                        await outcome
                except AgentSurfaceError as exc:
                    raise _Stop(exc.error) from None
                except Exception:
                    log.warning("policy %s failed while refusing a hidden call", policy.name, exc_info=True)
            return

    def _pick(self, call: _Call, visible: list[Registration]) -> Registration:
        req = call.request
        registry = self.registry

        def not_found() -> _Stop:  # built only when needed: errors are not free on the hot path
            return _fail(
                "CAPABILITY_NOT_FOUND",
                f"{req.capability_id} is not on the current surface. Refresh the surface.",
            )

        if req.registration_id is not None:
            for reg in visible:
                if reg.registration_id == req.registration_id:
                    if req.instance_id is not None and req.instance_id != reg.instance_id:
                        raise not_found()
                    return reg
            tomb = registry.tombstone(req.registration_id)
            same_instance = [
                r
                for r in visible
                if req.instance_id in (None, r.instance_id)
                and (
                    tomb is None
                    or (r.component_type, r.instance_id) == (tomb.component_type, tomb.instance_id)
                )
            ]
            if tomb is not None and len(same_instance) == 1:
                raise _fail(
                    "STALE_CAPABILITY",
                    "The component was re-mounted since discovery. Refresh the surface.",
                    reason="registration-replaced",
                    liveRegistrationId=same_instance[0].registration_id,
                )
            if tomb is not None:
                raise _fail(
                    "COMPONENT_UNMOUNTED",
                    "The component was unmounted. Refresh the surface.",
                    phase="resolve",
                )
            if len(same_instance) == 1:
                raise _fail(
                    "STALE_CAPABILITY",
                    "This registration is unknown here (was the page reloaded?). Refresh the surface.",
                    reason="surface-reloaded",
                    liveRegistrationId=same_instance[0].registration_id,
                )
            raise not_found()
        candidates = (
            visible if req.instance_id is None else [r for r in visible if r.instance_id == req.instance_id]
        )
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            if registry.tombstone_holding(req.capability_id, req.instance_id) is not None:
                raise _fail(
                    "COMPONENT_UNMOUNTED",
                    "The component was unmounted. Refresh the surface.",
                    phase="resolve",
                )
            raise not_found()
        instances: list[JsonValue] = []
        for reg in candidates:
            item: dict[str, JsonValue] = {
                "instanceId": reg.instance_id,
                "registrationId": reg.registration_id,
            }
            if call.request.capability_id.startswith("domain:"):
                item["context"] = {"type": reg.component_type, "instanceId": reg.instance_id}
            else:
                item["description"] = reg.binding.contract.description
            instances.append(item)
        raise _fail(
            "AMBIGUOUS_INSTANCE",
            "Several instances match; retry with an instanceId or registrationId.",
            instances=instances,
        )

    # ---- phase 3: availability

    def _check_available(self, call: _Call) -> None:
        reg, entry = call.reg, call.entry
        assert reg is not None and entry is not None
        ok, reason = availability(reg, entry)
        if ok:
            decision = discovery(reg, entry, call.consumer, self.registry.host_context, self.registry.now)
            if decision.outcome == "disable":
                ok, reason = False, decision.reason or "disabled by policy"
        if not ok:
            raise _fail(
                "CAPABILITY_NOT_AVAILABLE",
                f"{entry.capability_id} is not available right now: {reason}. Do the enabling step, then retry.",
                reason=reason,
            )

    # ---- phase 4: authorization

    def _policy_ctx(self, call: _Call, effective: Any = None) -> PolicyContext:
        reg, entry = call.reg, call.entry
        assert reg is not None and entry is not None
        base = policy_context(reg, entry, call.consumer, self.registry.host_context(), self.registry.now)
        if effective is None:
            return PolicyContext(**{**_fields(base), "invocation_id": call.invocation_id})
        return PolicyContext(
            **{**_fields(base), "invocation_id": call.invocation_id, "effective_input": effective}
        )

    async def _authorize(self, call: _Call) -> None:
        entry = call.entry
        assert entry is not None
        if not entry.policies:
            return
        ctx = self._policy_ctx(call)  # no effective input: phase 4 never sees agent input
        for policy, _scope in entry.policies:
            await self._run_policy(policy.on_authorize, ctx, policy.name)

    async def _run_policy(self, hook: Callable[[PolicyContext], Any], ctx: PolicyContext, name: str) -> None:
        try:
            outcome = hook(ctx)
            if inspect.isawaitable(outcome):
                await outcome
        except AgentSurfaceError as exc:
            raise _Stop(exc.error) from None
        except Exception:
            log.exception("policy %s failed; refusing the call", name)
            raise _fail("NOT_AUTHORIZED", "This call is not permitted.", origin="client") from None

    # ---- phase 5: effective input

    def _effective_input(self, call: _Call) -> None:
        entry = call.entry
        assert entry is not None
        raw = call.request.input
        if raw is not MISSING:
            try:
                raw = to_json_value(raw, max_depth=32)
            except NotJsonError as exc:
                raise _invalid([Issue(json_pointer(exc.parts), exc.reason)]) from None
            if json_size(raw) > MAX_INPUT_BYTES:
                raise _invalid([Issue(ROOT, f"input exceeds {MAX_INPUT_BYTES} bytes")])
        if entry.kind == "observation":
            if raw not in (MISSING, None, {}):
                raise _invalid([Issue(ROOT, "observations take no input")])
            call.value, call.effective = None, None
            return
        if entry.kind == "action":
            assert isinstance(entry.contract, ActionContract)
            self._validate(call, entry.contract.input, {} if raw in (MISSING, None) else raw)
            return
        ref = entry.reference
        assert ref is not None
        agent = {} if raw in (MISSING, None) else raw
        if not isinstance(agent, dict):
            raise _invalid([Issue(ROOT, "expected an object")])
        locked = sorted(f for f in ref.locked_fields if f in agent)
        if locked:
            raise _Stop(
                error(
                    "INVALID_INPUT",
                    "Some fields are bound to what the user has on screen; do not supply them.",
                    issues=[
                        {"path": json_pointer((f,)), "message": "bound to UI state; remove it"}
                        for f in locked
                    ],
                    lockedFields=locked,
                )
            )
        merged = dict(agent)
        if ref.bind is not None:
            bound = self._bind(ref.bind, ref.bound_fields)
            for name in ref.bound_fields:
                if name in ref.locked_fields or name not in agent:
                    merged[name] = bound[name]
        self._validate(call, ref.contract.input, merged)

    @staticmethod
    def _bind(bind: Callable[[], Mapping[str, Any]], fields: tuple[str, ...]) -> dict[str, JsonValue]:
        def failed() -> _Stop:
            return _fail(
                "PRECONDITION_FAILED",
                "The view's bound values could not be read; refresh and retry.",
                "after-refresh",
                reason="binding-failed",
            )

        try:
            bound = to_json_value(bind())
        except Exception:
            log.exception("procedure binding failed")
            raise failed() from None
        if not isinstance(bound, dict) or set(bound) != set(fields):
            log.error(
                "procedure binding returned keys %s, expected %s",
                sorted(bound) if isinstance(bound, dict) else bound,
                fields,
            )
            raise failed()
        return bound

    @staticmethod
    def _validate(call: _Call, schema: Schema, value: JsonValue) -> None:
        outcome = schema.validate(value)
        if isinstance(outcome, Invalid):
            raise _invalid(list(outcome.issues))
        call.value, call.effective = outcome.value, outcome.json

    # ---- phase 6: invoke policies and confirmation

    async def _invoke_policies(self, call: _Call) -> None:
        entry, reg = call.entry, call.reg
        assert entry is not None and reg is not None
        ctx = self._policy_ctx(call, call.effective) if entry.policies else None
        escalated = False
        summary_fn: Callable[[JsonValue], str] | None = None
        if ctx is not None:
            for policy, _scope in entry.policies:
                await self._run_policy(policy.on_invoke, ctx, policy.name)
                if isinstance(policy, AuditPolicy):  # it recorded the start: it gets the end
                    call.audit_policies.append(policy)
            for policy, _scope in entry.policies:
                try:
                    wants = policy.requires_confirmation(ctx)
                except Exception:
                    log.exception("policy %s failed deciding confirmation; requiring it", policy.name)
                    wants = True
                if wants:
                    escalated = True
                    summary_fn = summary_fn or getattr(policy, "summary", None)
        if entry.kind == "observation":
            return
        level = (
            entry.reference.confirmation
            if entry.reference is not None
            else getattr(entry.contract, "confirmation", "never")
        )
        if level != "required" and not escalated:
            return
        self._confirm(call, summary_fn)

    def _confirm(self, call: _Call, summary_fn: Callable[[JsonValue], str] | None) -> None:
        reg, entry = call.reg, call.entry
        assert reg is not None and entry is not None
        store = self.confirmations
        request = request_material(
            self.registry.surface_id,
            reg.registration_id,
            entry.capability_id,
            call.consumer.key,
            call.effective,
            entry.effect,
        )
        cid = call.request.confirmation_id
        if cid is not None:
            status, record = store.check(cid, request)
            if status == "approved":
                assert record is not None
                store.consume(record)
                call.confirmation = record
                return
            if status == "pending":
                assert record is not None
                raise self._required(record)
            retry = "with-confirmation" if status == "expired" else "no"
            messages = {
                "denied": "The user denied this request. Do not retry it.",
                "expired": "The approval expired. Ask again if still wanted.",
                "consumed": "This approval was already used. Each approval allows one call.",
                "mismatch": "This approval does not match the request; it covers a different input or target.",
            }
            raise _fail(
                "CONFIRMATION_INVALID", messages.get(status, messages["mismatch"]), retry, reason=status
            )
        record = store.find_pending(request)
        if record is None:
            record = store.create(request, self._summary(entry, call.effective, summary_fn))
            if record is None:
                raise _fail(
                    "RATE_LIMITED",
                    "Too many confirmations are waiting for the user. Retry later.",
                    reason="queue-full",
                    retryAfterMs=int(self.registry.limits.confirmation_ttl * 1000),
                )
        raise self._required(record)

    @staticmethod
    def _required(record: ConfirmationRecord) -> _Stop:
        p = record.pending
        return _fail(
            "CONFIRMATION_REQUIRED",
            "The user must approve this call. Retry with the confirmationId once approved.",
            confirmationId=p.confirmation_id,
            summary=p.summary,
            expiresAt=p.expires_at,
            effect=p.effect,
            origin="client",
        )

    @staticmethod
    def _summary(
        entry: CapabilityEntry, effective: JsonValue, summary_fn: Callable[[JsonValue], str] | None
    ) -> str:
        if summary_fn is not None:
            try:
                text = summary_fn(effective)
                if isinstance(text, str) and text:
                    return text[:500]
            except Exception:
                log.exception("confirmation summary failed; using the default")
        if entry.reference is not None:
            description = entry.reference.contract.description
        else:
            assert entry.contract is not None
            description = entry.contract.description
        if effective in (None, {}):
            return description
        rendered = canonical_json(effective)
        if len(rendered) > 300:
            rendered = rendered[:299] + "…"
        return f"{description} — {rendered}"

    # ---- phase 7: precondition

    def _precondition(self, call: _Call) -> None:
        entry, reg = call.entry, call.reg
        assert entry is not None and reg is not None
        if entry.kind != "action":
            return
        check = getattr(entry.binding, "precondition", None)
        if check is None:
            return
        ctx = ReadContext(
            entry.capability_id, reg.registration_id, call.consumer, self.registry.host_context()
        )
        try:
            outcome = check(call.value, ctx)
        except AgentSurfaceError as exc:
            raise _Stop(exc.error) from None
        except Exception:
            log.exception("precondition of %s raised", entry.capability_id)
            raise _fail(
                "PRECONDITION_FAILED",
                "The capability's precondition could not be checked.",
                reason="precondition-error",
            ) from None
        if isinstance(outcome, PreconditionFailure):
            extra = dict(outcome.details or {})
            extra.setdefault("reason", "precondition")
            raise _Stop(CapabilityError("PRECONDITION_FAILED", outcome.message, "with-changes", extra))

    # ---- phase 8: admission

    async def _admit(self, call: _Call) -> Release:
        entry, reg = call.entry, call.reg
        assert entry is not None and reg is not None
        waited_from = self.registry.now()
        if entry.kind == "observation":
            release = self.observations.try_acquire(call.consumer.key)
        else:
            key, max_active, _depth = self._group(reg, entry)
            release = self.actions.try_acquire(key, max_active)
        if reg.status == "active":
            reg.inflight.add(call.signal if _is_navigation(entry) else call.settle)
        if release is None:
            release = await self._wait_for_slot(call, entry, reg)
        call.queue_wait_ms = round((self.registry.now() - waited_from) * 1000, 3)
        if reg.status != "active":
            release()
            raise _fail(
                "COMPONENT_UNMOUNTED",
                "The component was unmounted before the call ran. Refresh the surface.",
                phase="resolve",
            )
        return release

    async def _wait_for_slot(self, call: _Call, entry: CapabilityEntry, reg: Registration) -> Release:
        if entry.kind == "observation":
            acquire = self.observations.acquire(call.consumer.key)
        else:
            key, max_active, depth = self._group(reg, entry)
            acquire = self.actions.acquire(key, max_active, depth)
        task = asyncio.ensure_future(acquire)

        def stop_waiting(_reason: str) -> None:
            task.cancel()

        remove = call.signal.add_listener(stop_waiting)
        try:
            return await task
        except QueueFull:
            _untrack(call, reg)
            raise _fail(
                "RATE_LIMITED",
                "Too many calls are queued for this target. Retry shortly.",
                reason="queue-full",
                retryAfterMs=int(self.registry.limits.action_timeout * 100),
            ) from None
        except asyncio.CancelledError:
            _untrack(call, reg)
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # our caller was cancelled
                task.cancel()
                raise
            # The wait itself ended: a signal fired, or disposal drained the queue.
            raise self._aborted(call, call.signal.reason or "cancelled", during_execution=False) from None
        finally:
            remove()

    def _group(self, reg: Registration, entry: CapabilityEntry) -> tuple[str, int, int]:
        depth_default = self.registry.limits.action_queue_depth
        if entry.reference is not None:
            conc = entry.reference.concurrency
            if conc is None:  # one group per procedure identity per referencing registration
                return (f"proc|{reg.registration_id}|{entry.capability_id}", 1, depth_default)
        else:
            conc = entry.contract.concurrency  # type: ignore[union-attr]
        depth = depth_default if conc.queue_depth is None else conc.queue_depth
        if conc.mode == "instance":
            return (f"inst|{reg.registration_id}", 1, depth)
        if conc.mode == "capability":
            return (f"cap|{reg.registration_id}|{entry.capability_id}", 1, depth)
        if conc.mode == "key":
            return (f"key|{conc.key}", 1, depth)
        return (f"par|{reg.registration_id}|{entry.capability_id}", int(conc.max or 1), depth)

    # ---- phases 9 and 10: execution and settlement

    async def _execute(self, call: _Call) -> JsonValue:
        entry, reg = call.entry, call.reg
        assert entry is not None and reg is not None
        registry = self.registry
        limits = registry.limits
        timeout = call.timeout or self._timeout(entry)
        cancel_timer = registry.clock.call_later(timeout, lambda: call.settle.abort("timeout"))
        self.active.add(call.settle)
        begun = registry.now()
        try:
            if call.signal.aborted:
                raise self._aborted(call, call.signal.reason or "cancelled", during_execution=False)
            raw = await self._call_handler(call)
        finally:
            cancel_timer()
            self.active.discard(call.settle)
            _untrack(call, reg)
            call.execution_ms = round((registry.now() - begun) * 1000, 3)
        return self._check_output(entry, raw, limits.max_output_bytes)

    def _timeout(self, entry: CapabilityEntry) -> float:
        limits = self.registry.limits
        if entry.reference is not None:
            return entry.reference.contract.timeout or limits.procedure_timeout
        assert entry.contract is not None
        if entry.kind == "observation":
            return entry.contract.timeout or limits.observation_timeout
        return entry.contract.timeout or limits.action_timeout

    async def _call_handler(self, call: _Call) -> Any:
        entry, reg = call.entry, call.reg
        assert entry is not None and reg is not None
        host = self.registry.host_context()
        try:
            if entry.kind == "observation":
                assert isinstance(entry.binding, ObservationBinding)
                outcome = entry.binding.read(
                    ReadContext(entry.capability_id, reg.registration_id, call.consumer, host)
                )
            else:
                confirmation = None
                if call.confirmation is not None and call.confirmation.approved_at is not None:
                    confirmation = {
                        "id": call.confirmation.id,
                        "approvedAt": iso(call.confirmation.approved_at),
                    }
                ctx = ActionContext(
                    entry.capability_id,
                    reg.registration_id,
                    call.consumer,
                    call.invocation_id,
                    call.signal,
                    host,
                    confirmation,
                )
                if entry.kind == "action":
                    assert isinstance(entry.binding, ActionBinding)
                    outcome = entry.binding.execute(call.value, ctx)
                else:
                    executor = self.executor
                    if executor is None:
                        raise _fail(
                            "EXECUTION_FAILED",
                            "No procedure executor is installed for domain calls.",
                            reason="transport",
                        )
                    outcome = executor(entry.capability_id, call.effective, ctx)
            if not inspect.isawaitable(outcome):
                return outcome
            return await self._await_or_abort(call, outcome)
        except _Stop:
            raise
        except AgentSurfaceError as exc:
            raise _Stop(exc.error) from None
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # our caller was cancelled
                raise
            raise self._handler_failed(call, entry) from None  # a sync handler cancelled itself
        except Exception:
            raise self._handler_failed(call, entry) from None

    @staticmethod
    def _handler_failed(call: _Call, entry: CapabilityEntry) -> _Stop:
        """A handler raised: CANCELLED if it was told to stop, else a sanitized failure."""
        if call.signal.aborted:
            log.info("handler of %s stopped after its signal aborted", entry.capability_id)
            return _fail("CANCELLED", "The invocation was cancelled.", "yes")
        log.exception("handler of %s raised", entry.capability_id)
        reason = "transport" if entry.kind == "procedure" else "handler-error"
        return _fail(
            "EXECUTION_FAILED",
            "The call failed while running; its effect may or may not have been applied.",
            reason=reason,
        )

    async def _await_or_abort(self, call: _Call, outcome: Awaitable[Any]) -> Any:
        # Only a coroutine runs in a task we own: cancelling it stops it at its next await. Any
        # other awaitable (a JS promise, a future from elsewhere) keeps running if we cancel ours.
        stoppable = inspect.iscoroutine(outcome)
        task = asyncio.ensure_future(outcome)
        if call.settle.aborted:
            reason = call.settle.reason or "cancelled"
        else:
            aborted: asyncio.Future[str] = asyncio.get_running_loop().create_future()

            def on_abort(why: str) -> None:
                # A handler that had already settled when the abort came wins, even if this
                # coroutine has not resumed yet; an abort that came first wins over a later
                # settlement in the same loop turn.
                if not task.done() and not aborted.done():
                    aborted.set_result(why)

            remove = call.settle.add_listener(on_abort)
            try:
                await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                call.settle.abort("cancelled")
                task.cancel()  # our caller is gone: stop the handler too, without waiting
                task.add_done_callback(lambda t: self._late(call, t, "cancelled"))
                raise
            finally:
                remove()
            if not aborted.done():
                if task.cancelled():  # the handler cancelled itself (e.g. raise_if_aborted())
                    raise _HandlerCancelled()
                return task.result()
            reason = aborted.result()
        handler = await self._stop_handler(task, stoppable)
        task.add_done_callback(lambda t: self._late(call, t, reason))
        raise self._aborted(call, reason, during_execution=True, handler=handler)

    async def _stop_handler(self, task: asyncio.Future[Any], stoppable: bool) -> HandlerFate:
        """Stop a handler the call has given up on, so that its effect cannot land after the
        agent was told the call ended. Its signal has already fired; now its task is cancelled
        and given ``HANDLER_STOP_GRACE`` seconds (registry clock) to unwind. "stopped": it is
        no longer running; "unknown": it may still be running (it ignored the cancellation, or
        it is not a coroutine this loop can stop)."""
        if task.done():
            return "stopped"
        task.cancel()
        if not stoppable:
            return "unknown"
        grace: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def grace_over() -> None:
            if not grace.done():
                grace.set_result(None)

        cancel_timer = self.registry.clock.call_later(HANDLER_STOP_GRACE, grace_over)
        try:
            await asyncio.wait({task, grace}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel_timer()
            grace.cancel()
        return "stopped" if task.done() else "unknown"

    def _late(self, call: _Call, task: asyncio.Future[Any], reason: str) -> None:
        status = "cancelled" if task.cancelled() else ("error" if task.exception() is not None else "ok")
        log.info("late settlement of %s after %s (%s)", call.invocation_id, reason, status)
        self.audit(
            "late-settlement",
            capability_id=str(call.request.capability_id),
            invocation_id=call.invocation_id,
            consumer_id=call.consumer.id,
            status=status,
            detail=reason,
        )

    def _aborted(
        self, call: _Call, reason: str, *, during_execution: bool, handler: HandlerFate | None = None
    ) -> _Stop:
        entry = call.entry
        assert entry is not None
        if reason == "timeout":
            idempotent = bool(
                entry.reference.contract.idempotent
                if entry.reference is not None
                else getattr(entry.contract, "idempotent", False)
            )
            seconds = call.timeout or self._timeout(entry)
            if idempotent:
                message = "The call timed out; it is safe to retry."
            elif handler == "unknown":
                message = (
                    "The call timed out and could not be stopped; its effect may still be applied. "
                    "Verify state before repeating."
                )
            else:
                message = (
                    "The call timed out and was stopped; part of its effect may have been applied. "
                    "Verify state before repeating."
                )
            return _fail(
                "TIMEOUT",
                message,
                "yes" if idempotent else "no",
                timeoutMs=int(seconds * 1000),
                idempotent=idempotent,
                handler=handler,
            )
        if reason == "disposed":
            return _Stop(surface_shut_down())
        if reason == "unmounted":
            return _fail(
                "COMPONENT_UNMOUNTED",
                "The view changed while acting; verify state before repeating."
                if during_execution
                else "The component was unmounted before the call ran. Refresh the surface.",
                phase="mid-flight" if during_execution else "resolve",
            )
        if handler == "unknown":  # a retry could apply the effect twice
            return _fail(
                "CANCELLED",
                "The invocation was cancelled but could not be stopped; its effect may still be "
                "applied. Verify state before repeating.",
                "no",
            )
        return _fail("CANCELLED", "The invocation was cancelled.", "yes")

    @staticmethod
    def _check_output(entry: CapabilityEntry, raw: Any, max_bytes: int) -> JsonValue:
        schema: Schema | None
        if entry.reference is not None:
            schema = entry.reference.contract.output
        else:
            assert isinstance(entry.contract, (ObservationContract, ActionContract))
            schema = entry.contract.output

        def invalid() -> _Stop:
            return _fail(
                "EXECUTION_FAILED", "The capability returned a malformed result.", reason="output-invalid"
            )

        if schema is not None:
            validate_output = getattr(schema, "validate_output", None)
            outcome = validate_output(raw) if validate_output is not None else schema.validate(raw)
            if not isinstance(outcome, Valid):
                log.error(
                    "output of %s failed its schema: %s",
                    entry.capability_id,
                    getattr(outcome, "issues", outcome),
                )
                raise invalid()
            value = outcome.json
        else:
            try:
                value = to_json_value(raw)
            except NotJsonError as exc:
                log.error("output of %s is not JSON: %s", entry.capability_id, exc)
                raise invalid() from None
        if value is not None and json_size(value) > max_bytes:
            raise _fail(
                "EXECUTION_FAILED",
                f"The result exceeded {max_bytes} bytes and was not returned.",
                reason="output-too-large",
            )
        return value

    # ------------------------------------------------------------------ teardown

    def dispose(self) -> None:
        for signal in list(self.active):
            signal.abort("disposed")
        self.actions.cancel_all()
        self.observations.cancel_all()
        self.confirmations.expire_all()


def _invalid(issues: list[Issue]) -> _Stop:
    first = issues[0] if issues else Issue(ROOT, "invalid")
    return _Stop(
        error(
            "INVALID_INPUT",
            f"The input is invalid at {first.path}: {first.message}. Fix it and retry.",
            issues=[i.to_json() for i in issues],
        )
    )


_ENVELOPE_FIELDS = ("instance_id", "registration_id", "surface_id", "surface_version", "confirmation_id")
_WIRE_NAMES = {
    "instance_id": "instanceId",
    "registration_id": "registrationId",
    "surface_id": "surfaceId",
    "surface_version": "surfaceVersion",
    "confirmation_id": "confirmationId",
}


def _malformed_envelope(req: Invocation) -> str | None:
    """The wire name of the first targeting/evidence field that is set but not a string.

    These fields arrive from agents (meta-mode envelopes) and are used as lookup keys: a list
    or dict there must settle as INVALID_INPUT, not raise ``unhashable type`` mid-pipeline."""
    for name in _ENVELOPE_FIELDS:
        value = getattr(req, name)
        if value is not None and not isinstance(value, str):
            return _WIRE_NAMES[name]
    return None


def _untrack(call: _Call, reg: Registration) -> None:
    reg.inflight.discard(call.signal)
    reg.inflight.discard(call.settle)


def _is_navigation(entry: CapabilityEntry) -> bool:
    return entry.kind == "action" and entry.effect == "navigation"


def _memo(fn: Callable[[], Any]) -> Callable[[], Any]:
    cache: list[Any] = []

    def get() -> Any:
        if not cache:
            cache.append(fn())
        return cache[0]

    return get


def _fields(ctx: PolicyContext) -> dict[str, Any]:
    return {name: getattr(ctx, name) for name in PolicyContext.__dataclass_fields__}


def _random(prefix: str) -> str:
    from .registry import random_id

    return random_id(prefix, 16)
