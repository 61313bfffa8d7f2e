"""The registry: live registrations, versions, events, snapshots — the execution authority."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from ..._compat import running_loop_or_none
from ..audit import AuditSink, ConsoleAuditSink, FanOutSink, MemoryAuditSink, record_lifecycle, record_mount
from ..clock import Clock, as_clock, iso
from ..consumer import ANONYMOUS, Consumer
from ..contracts import ComponentBinding
from ..contracts.authority import CapabilityAuthority, assert_capability_authority
from ..contracts.context import CancelSignal
from ..errors import RegistryClosedError
from ..events import EventBus, Listener, SurfaceEvent, make_event
from ..ids import random_id
from ..limits import DEFAULT_LIMITS, Limits
from ..pipeline import Pipeline, ProcedureExecutor, start
from ..pipeline.confirmation import ConfirmationController
from ..pipeline.invocation import Invocation, InvocationResult
from ..policies.base import Policy
from ..registrations.entries import capability_ids
from ..registrations.registration import Registration, Tombstone, Tombstones
from .checks import check_executor, check_options, guard_accepts, suffix_collisions
from .handles import RegistrationHandle
from .holders import ORDER, Holders
from .live_updates import apply_update, first_publication, publish_flips
from .snapshot import Budget, Snapshot, build_snapshot, normalize_scope

__all__ = ["AgentSurfaceRegistry", "RegistrationHandle", "random_id"]

log = logging.getLogger("agentsurface")

Environment = Literal["development", "production", "test"]


class AgentSurfaceRegistry:
    """Holds live registrations and answers snapshots and invocations for consumers.

    ``AgentSurfaceRegistry(authority=...)``: a registry cannot exist without a genuine capability
    authority, and it only accepts bindings whose contracts that authority proves.
    ``procedure_executor`` (the host's backend, e.g. a ``BackendBridge``) runs the ``domain:``
    procedures its components reference; without one such references are refused at
    registration. Both are fixed for the registry's life. ``close()`` (or
    ``with``) ends it: in-flight calls settle as cancelled, later use raises ``RegistryClosedError``.
    """

    # Slots: some hosts make a registry per request or page. __dict__ stays for patching.
    __slots__ = (
        "__dict__", "__weakref__", "_by_id", "_by_key", "_context", "_disposed", "_events", "_holders",
        "_id_suffix", "_on_duplicate", "_on_register", "_pipeline", "_policies", "_procedure_executor",
        "_registrations_made", "_route",
        "_suffix_policy", "_surface_changed_loop", "_surface_id", "_tombstones", "_version", "audit_sink",
        "authority", "clock", "environment", "limits", "now",
    )

    def __init__(
        self,
        *,
        authority: CapabilityAuthority,
        environment: Environment = "production",
        context: Callable[[], Mapping[str, Any]] | None = None,
        policies: Sequence[Policy] = (),
        on_register: Callable[[Mapping[str, Any]], Literal["accept", "reject"]] | None = None,
        on_duplicate_instance: Literal["reject", "replace"] = "reject",
        duplicate_suffix_policy: Literal["off", "warn", "error"] = "warn",
        route: Callable[[], Mapping[str, Any] | None] | None = None,
        limits: Limits | None = None,
        clock: Clock | Callable[[], float] | None = None,
        audit: AuditSink | None = None,
        procedure_executor: ProcedureExecutor | None = None,
    ) -> None:
        self.authority = assert_capability_authority(authority)
        if environment not in ("development", "production", "test"):
            raise ValueError(f"environment must be development, production or test, got {environment!r}")
        if on_duplicate_instance not in ("reject", "replace"):
            raise ValueError("on_duplicate_instance must be 'reject' or 'replace'")
        if duplicate_suffix_policy not in ("off", "warn", "error"):
            raise ValueError("duplicate_suffix_policy must be 'off', 'warn' or 'error'")
        # The defaults need no checking (creating a registry is on the hot path of some hosts).
        plain = type(policies) is tuple and not policies and limits is None
        if procedure_executor is not None and not callable(procedure_executor):
            raise TypeError(f"procedure_executor must be callable, got {procedure_executor!r}")
        if not plain or context is not None or on_register is not None or route is not None:
            check_options(policies, limits, context=context, on_register=on_register, route=route)
        self.environment: Environment = environment
        self.limits = limits or DEFAULT_LIMITS
        self.clock: Clock = as_clock(clock)
        self.now: Callable[[], float] = self.clock.now
        self._surface_id: str | None = None  # drawn when first asked (most registries never are)
        self._context = context
        self._policies = tuple(policies)
        self._on_register = on_register
        self._on_duplicate = on_duplicate_instance
        self._suffix_policy = duplicate_suffix_policy
        self._route = route
        self._version = 0
        self._registrations_made = 0  # numbers the registration ids
        self._by_id: dict[str, Registration] = {}
        self._by_key: dict[tuple[str, str], Registration] = {}
        # capability id -> live registrations holding it, in snapshot order (resolution index).
        self._holders = Holders()
        self._tombstones: Tombstones | None = None  # made by the first unregistration
        self._events = EventBus()
        # The loop that owes a coalesced surface-changed, if one is scheduled.
        self._surface_changed_loop: asyncio.AbstractEventLoop | None = None
        self._disposed = False
        if audit is None:
            memory = MemoryAuditSink()
            audit = FanOutSink(memory, ConsoleAuditSink()) if environment == "development" else memory
        self.audit_sink: AuditSink = audit
        # Fixed for the registry's life: a registered procedure reference relies on it.
        self._procedure_executor: Final = procedure_executor
        self._pipeline: Pipeline | None = None

    # ------------------------------------------------------------------ basics

    @property
    def version(self) -> str:
        """The surface version: a decimal string, bumped by every surface-affecting mutation."""
        return str(self._version)

    @property
    def surface_id(self) -> str:
        """This registry's identity on the wire (a page reload gives a new one)."""
        if self._surface_id is None:
            self._surface_id = random_id("srf_")
        return self._surface_id

    @property
    def revision(self) -> int:
        """The surface version as an integer (what the pipeline compares)."""
        return self._version

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._disposed

    def host_context(self) -> Mapping[str, Any]:
        if self._context is None:
            return {}
        try:
            return self._context()
        except Exception:
            log.exception("registry context() raised; policies see an empty host context")
            return {}

    def subscribe(self, listener: Listener, types: Iterable[str] | None = None) -> Callable[[], None]:
        """Call ``listener`` with every event, or only with those of ``types``."""
        self._check_alive()
        return self._events.subscribe(listener, types)

    def _emit(self, *events: SurfaceEvent) -> None:
        self._events.emit(*events)

    def _check_alive(self) -> None:
        if self._disposed:
            raise RegistryClosedError("this registry has been closed")

    def _bump(self, events: list[SurfaceEvent]) -> None:
        """Bump the version, dispatch ``events`` and a ``surface-changed``.

        With a running event loop, ``surface-changed`` is coalesced: the first bump of a turn
        schedules it (``call_soon``) and later bumps ride on it, so three synchronous
        registrations make one event carrying the last version. Without a running loop (plain
        synchronous use) there is no turn to wait for: each bump dispatches its own, right
        behind the events that caused it.
        """
        self._version += 1
        loop = running_loop_or_none()
        if loop is None:
            if self._events.active:  # nobody listening: skip building the event
                self._emit(*events, make_event("surface-changed", surfaceVersion=str(self._version)))
            return
        if events:
            self._emit(*events)
        if self._surface_changed_loop is not loop:  # not yet owed this turn
            self._surface_changed_loop = loop
            loop.call_soon(self._flush_surface_changed, loop)

    def _flush_surface_changed(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._surface_changed_loop is loop:
            self._surface_changed_loop = None
        if not self._disposed and self._events.active:
            self._emit(make_event("surface-changed", surfaceVersion=str(self._version)))

    def _new_registration_id(self) -> str:
        # A counter, then random characters drawn once per registry: ids never repeat within a
        # registry, and an id from another registry (an earlier page load) matches none here.
        made = self._registrations_made = self._registrations_made + 1
        if made == 1:
            self._id_suffix = random_id("", 8)
        return f"reg_{made:06x}{self._id_suffix}"

    # ------------------------------------------------------------------ registration

    def register(self, binding: Any) -> RegistrationHandle:
        """Register a bound component (or an ``AgentComponent`` instance, bound with defaults).

        Structural defects and bindings the authority does not prove raise ``DefinitionError``
        and register nothing. Duplicates and guard refusals return a dead handle.
        """
        if self._disposed:
            self._check_alive()
        if (
            not isinstance(binding, ComponentBinding)
            and hasattr(binding, "bind")
            and hasattr(type(binding), "contract")
        ):
            binding = binding.bind()
        verified = self.authority.verify_binding(binding)
        contract = verified.contract
        if verified.procedures:
            check_executor(verified, self._procedure_executor is not None)
        domain_paths = self.authority.domain_paths
        collisions = suffix_collisions(verified, domain_paths, self._suffix_policy) if domain_paths else []
        key = (contract.type, verified.instance_id)
        if self._on_register is not None and not guard_accepts(self._on_register, verified):
            return self._reject(verified, "guard")
        existing = self._by_key.get(key)
        if existing is not None:
            if self._on_duplicate == "reject":
                return self._reject(verified, "duplicate")
            self._unregister(existing)
        enabled = verified.enabled
        ids = capability_ids(verified)
        now = self.now()
        reg = Registration(
            self._new_registration_id(),
            verified,
            now,
            enabled,
            ids,
            self._policies,
            # Without a when(), a fresh registration publishes its enabled flag everywhere.
            published=dict.fromkeys(ids, enabled),
            environment=self.environment,
        )
        if verified.any_when:
            reg.published = first_publication(reg)
        self._by_id[reg.registration_id] = reg
        self._by_key[key] = reg
        self._holders.add(reg)
        record_mount(self.audit_sink, now, "registration", reg.registration_id, contract.type, verified.instance_id)
        self._bump(
            [
                *collisions,  # dispatched after the mutation, like every other event
                make_event(
                    "component-registered",
                    registrationId=reg.registration_id,
                    componentType=contract.type,
                    instanceId=verified.instance_id,
                ),
            ]
            if self._events.active  # anyone to reach: build the events
            else []
        )
        return RegistrationHandle(self, reg.registration_id, reg)

    def _reject(self, binding: ComponentBinding, reason: str) -> RegistrationHandle:
        log_fn = log.error if self.environment == "development" else log.warning
        log_fn("registration of %s@%s rejected (%s)", binding.contract.type, binding.instance_id, reason)
        self._audit(
            "registration-rejected", detail=f"{binding.contract.type}@{binding.instance_id}: {reason}"
        )
        self._emit(
            make_event(
                "component-rejected",
                componentType=binding.contract.type,
                instanceId=binding.instance_id,
                reason=reason,
            )
        )
        return RegistrationHandle(self, self._new_registration_id(), None)

    def _unregister(self, reg: Registration) -> None:
        if reg.status != "active":
            return
        reg.status = "unregistered"
        rid = reg.registration_id
        binding = reg.binding
        component_type = binding.contract.type
        instance_id = binding.instance_id
        self._by_id.pop(rid, None)
        key = (component_type, instance_id)
        if self._by_key.get(key) is reg:
            del self._by_key[key]
        self._holders.remove(reg)
        tombstones = self._tombstones
        if tombstones is None:
            limits = self.limits
            tombstones = self._tombstones = Tombstones(limits.tombstone_size, limits.tombstone_ttl)
        now = self.now()
        tombstones.add(rid, component_type, instance_id, reg.registered_at, now, reg.capability_ids)
        if reg.inflight:
            self.on_unmount(reg)
        record_mount(self.audit_sink, now, "unregistration", rid, component_type, instance_id)
        self._bump(
            [
                make_event(
                    "component-unregistered",
                    registrationId=rid,
                    componentType=component_type,
                    instanceId=instance_id,
                )
            ]
            if self._events.active
            else []
        )

    def on_unmount(self, reg: Registration) -> None:
        """Abort in-flight work of an unmounted registration (the invoker settles it)."""
        if not reg.inflight:
            return
        for signal in list(reg.inflight):
            signal.abort("unmounted")

    def _update(self, reg: Registration, enabled: bool | None, overrides: Mapping[str, Any] | None) -> None:
        events = apply_update(reg, enabled, overrides)
        if events is not None:
            self._bump(events)

    def sync_availability(self) -> None:
        """Re-evaluate ``when()`` everywhere and publish what flipped since the last publication.

        Lazy ``when()`` drift never bumps the surface version by itself; a host that wants
        event-driven consumers (the WebMCP adapter registers only available tools) calls this
        after its state changes, as a UI framework would after rendering.
        """
        self._check_alive()
        events = publish_flips(self._by_id.values())
        if events:
            self._bump(events)

    # ------------------------------------------------------------------ reading

    def registrations(self) -> list[Registration]:
        """Live registrations in snapshot order (for the invoker, adapters' internals, tools)."""
        return sorted(self._by_id.values(), key=ORDER)

    def registration(self, registration_id: str) -> Registration | None:
        return self._by_id.get(registration_id)

    def tombstone(self, registration_id: str) -> Tombstone | None:
        tombstones = self._tombstones
        return None if tombstones is None else tombstones.get(registration_id, self.now())

    def _tombstone_holding(self, capability_id: str, instance_id: str | None) -> Tombstone | None:
        tombstones = self._tombstones
        return None if tombstones is None else tombstones.holding(capability_id, instance_id, self.now())

    def snapshot(
        self,
        *,
        consumer: Consumer | None = None,
        scope: Sequence[str] | None = None,
        include_unavailable: bool = True,
        budget: Budget | None = None,
    ) -> Snapshot:
        """A synchronous, side-effect-free catalog for ``consumer`` (never runs ``read()``)."""
        self._check_alive()
        if consumer is not None and not isinstance(consumer, Consumer):
            raise TypeError(f"consumer must be a Consumer, got {consumer!r}")
        return build_snapshot(
            surface_id=self.surface_id,
            surface_version=self.version,
            captured_at=iso(self.now()),
            registrations=self.registrations(),
            consumer=consumer or ANONYMOUS,
            host_context=self.host_context,
            now=self.now,
            scope=normalize_scope(scope),
            include_unavailable=include_unavailable,
            budget=budget,
            route=self._route,
        )

    # ------------------------------------------------------------------ invocation

    @property
    def _invoker(self) -> Pipeline:
        """The invocation pipeline's state (queues, confirmations, executor)."""
        if self._pipeline is None:  # created on first use: a registry that only lists stays cheap
            self._pipeline = Pipeline(self, self._events, self.audit_sink, self._procedure_executor)
        return self._pipeline

    @property
    def confirmations(self) -> ConfirmationController:
        """Pending confirmations for the host UI: ``pending()``, ``resolve()``, ``wait_for()``."""
        return self._invoker.confirmations

    async def invoke(
        self,
        request: Invocation | Mapping[str, Any],
        *,
        consumer: Consumer | None = None,
        signal: CancelSignal | None = None,
        timeout: float | None = None,
    ) -> InvocationResult:
        """Run one invocation through the pipeline: a result, never a raise for what an agent did."""
        if self._disposed:  # start_invocation, inline: one frame less on every call
            raise RegistryClosedError("this registry has been closed")
        outcome = start(self._pipeline or self._invoker, request, consumer, signal, timeout)
        return outcome if isinstance(outcome, InvocationResult) else await outcome

    def start_invocation(
        self,
        request: Invocation | Mapping[str, Any],
        *,
        consumer: Consumer | None = None,
        signal: CancelSignal | None = None,
        timeout: float | None = None,
    ) -> InvocationResult | Awaitable[InvocationResult]:
        """``invoke``, answered now if the call never waits; else an awaitable that must be awaited."""
        if self._disposed:
            raise RegistryClosedError("this registry has been closed")
        return start(self._pipeline or self._invoker, request, consumer, signal, timeout)

    def _audit(self, type_: str, registration_id: str | None = None, detail: str | None = None) -> None:
        record_lifecycle(self.audit_sink, self.now(), type_, registration_id, detail)

    # ------------------------------------------------------------------ teardown

    def __enter__(self) -> AgentSurfaceRegistry:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Unregister everything, cancel in-flight work, drop listeners. Idempotent."""
        if self._disposed:
            return
        by_id = self._by_id
        if by_id:  # the other indexes hold only what this one holds
            for reg in list(by_id.values()):
                reg.status = "unregistered"
                for signal in list(reg.inflight):
                    signal.abort("disposed")
        if self._pipeline is not None:
            self._pipeline.close()
        if by_id:
            by_id.clear()
            self._by_key.clear()
            self._holders.clear()
        self._disposed = True
        self._events.clear()
