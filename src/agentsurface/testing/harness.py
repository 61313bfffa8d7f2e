"""A deterministic harness: a registry with a test authority, consumer kind ``test``, a manual
clock, and conveniences for invoking, observing, capturing staleness tokens, switching the host
context and resolving confirmations. No LLM, no browser, no sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

from .._compat import running_loop_or_none
from .._core.audit import AuditEvent, MemoryAuditSink
from .._core.clock import ManualClock
from .._core.consumer import Consumer
from .._core.contracts.authority import CapabilityAuthority, compile_manifest
from .._core.errors import AgentSurfaceError
from .._core.events import SurfaceEvent
from .._core.limits import Limits
from .._core.pipeline.confirmation import PendingConfirmation
from .._core.pipeline.invocation import MISSING, Invocation, InvocationResult
from .._core.pipeline.runtime import ProcedureExecutor
from .._core.policies.base import Policy
from .._core.records import record
from .._core.registry.descriptors import Budget, Snapshot
from .._core.registry.registry import AgentSurfaceRegistry, Environment, RegistrationHandle

TEST_CONSUMER = Consumer("test", "test")
T = TypeVar("T")


@record
class CapturedRef:
    """Resolution tokens captured at one moment, to replay a stale invocation later."""

    registration_id: str
    surface_version: str


class InvocationFailed(AgentSurfaceError, AssertionError):
    def __init__(self, result: InvocationResult) -> None:
        error = result.error
        super().__init__(
            f"{result.capability_id} failed: {error.code if error else '?'}: {error.message if error else ''}"
        )
        self.result = result


@record
class SurfaceState:
    """What an observation must leave as it found it: the surface version and registrations."""

    version: str
    registrations: tuple[str, ...]


class ImpureObservation(AgentSurfaceError, AssertionError):
    """An observation changed the surface (mounted, unmounted, updated or invalidated something)."""

    def __init__(self, capability_id: str, before: SurfaceState, after: SurfaceState) -> None:
        changes = []
        if after.version != before.version:
            changes.append(f"surface version {before.version} -> {after.version}")
        added = sorted(set(after.registrations) - set(before.registrations))
        removed = sorted(set(before.registrations) - set(after.registrations))
        if added:
            changes.append(f"registered {', '.join(added)}")
        if removed:
            changes.append(f"unregistered {', '.join(removed)}")
        super().__init__(
            f"observation {capability_id} changed the surface while it ran ({'; '.join(changes)}); "
            "observations must only read"
        )
        self.capability_id = capability_id
        self.before = before
        self.after = after


class TestConfirmations:
    """The host's side of confirmations, as a user clicking in a dialog would act."""

    __test__ = False  # not a pytest test class

    def __init__(self, surface: TestSurface) -> None:
        self._surface = surface

    def pending(self) -> list[PendingConfirmation]:
        return self._surface.registry.confirmations.pending()

    def _pick(self, confirmation_id: str | None) -> str:
        if confirmation_id is not None:
            return confirmation_id
        pending = self.pending()
        if len(pending) != 1:
            raise AssertionError(f"expected exactly one pending confirmation, found {len(pending)}")
        return pending[0].confirmation_id

    def approve(self, confirmation_id: str | None = None) -> None:
        cid = self._pick(confirmation_id)
        if not self._surface.registry.confirmations.resolve(cid, approved=True):
            raise AssertionError(f"confirmation {cid} is not pending")

    def deny(self, confirmation_id: str | None = None, reason: str | None = None) -> None:
        cid = self._pick(confirmation_id)
        if not self._surface.registry.confirmations.resolve(cid, approved=False, reason=reason):
            raise AssertionError(f"confirmation {cid} is not pending")

    def expire(self, confirmation_id: str | None = None) -> None:
        """Advance the clock past the confirmation TTL (every pending record expires)."""
        self._pick(confirmation_id)
        self._surface.clock.advance(self._surface.registry.limits.confirmation_ttl + 0.001)


class TestSurface:
    """What ``create_test_surface`` returns. All time is the harness's ``clock``."""

    __test__ = False

    def __init__(
        self,
        registry: AgentSurfaceRegistry,
        clock: ManualClock,
        consumer: Consumer,
        host: dict[str, Any],
        audit: MemoryAuditSink | None,
    ) -> None:
        self.registry = registry
        self.clock = clock
        self.consumer = consumer
        self._host = host
        self._audit = audit
        self._events: list[SurfaceEvent] = []
        self._unsubscribe = registry.subscribe(self._events.append)
        # The test plays the person (surface.confirmations.approve/deny): the host's dialog.
        self._unsubscribe_host = registry.confirmations.subscribe(lambda _pending: None)
        self.confirmations = TestConfirmations(self)
        self._loop: asyncio.AbstractEventLoop | None = None  # for call()/read(), made on first use

    # ------------------------------------------------------------------ setup

    def mount(self, component: Any) -> RegistrationHandle:
        """Register a bound component (or an AgentComponent instance)."""
        return self.registry.register(component)

    def as_host(self, host: Mapping[str, Any]) -> None:
        """Swap the host context mid-test (sign in/out, change role or tenant)."""
        self._host.clear()
        self._host.update(host)

    def as_consumer(self, consumer: Consumer) -> TestSurface:
        """The same registry seen by another consumer (policies and idempotency are per consumer)."""
        other = TestSurface.__new__(TestSurface)
        other.__dict__.update(self.__dict__)
        other.consumer = consumer
        other.confirmations = TestConfirmations(other)
        return other

    # ------------------------------------------------------------------ reading

    def snapshot(
        self,
        *,
        scope: Iterable[str] | None = None,
        include_unavailable: bool = True,
        budget: Budget | None = None,
    ) -> Snapshot:
        return self.registry.snapshot(
            consumer=self.consumer,
            scope=None if scope is None else list(scope),
            include_unavailable=include_unavailable,
            budget=budget,
        )

    def capture_ref(self, capability_id: str, instance_id: str | None = None) -> CapturedRef:
        snap = self.snapshot()
        matches = [
            (c.registration_id, c.instance_id)
            for c in snap.components
            for cap in c.capabilities
            if cap.capability_id == capability_id and instance_id in (None, c.instance_id)
        ] + [
            (p.registration_id, p.context[1])
            for p in snap.procedures
            if p.procedure_id == capability_id and instance_id in (None, p.context[1])
        ]
        if len(matches) != 1:
            raise AssertionError(f"{capability_id} matches {len(matches)} live targets; pass instance_id")
        return CapturedRef(matches[0][0], snap.surface_version)

    # ------------------------------------------------------------------ calling

    async def invoke(
        self,
        capability_id: str,
        input: Any = MISSING,
        *,
        instance_id: str | None = None,
        registration_id: str | None = None,
        surface_version: str | None = None,
        confirmation_id: str | None = None,
        invocation_id: str | None = None,
        consumer: Consumer | None = None,
    ) -> InvocationResult:
        """Invoke as the harness consumer. Results are returned, never raised."""
        request = Invocation(
            capability_id=capability_id,
            input=input,
            invocation_id=invocation_id,
            instance_id=instance_id,
            registration_id=registration_id,
            surface_version=surface_version,
            confirmation_id=confirmation_id,
        )
        return await self.registry.invoke(request, consumer=consumer or self.consumer)

    async def observe(self, capability_id: str, *, instance_id: str | None = None) -> Any:
        """Run an observation and return its output; raises InvocationFailed on an error result,
        and ImpureObservation if the surface changed while it ran (observations only read)."""
        before = self._surface_state()
        result = await self.invoke(capability_id, instance_id=instance_id)
        after = self._surface_state()
        if after != before:
            raise ImpureObservation(capability_id, before, after)
        if not result.ok:
            raise InvocationFailed(result)
        return result.output

    # ------------------------------------------------------------------ from sync tests

    def call(
        self,
        capability_id: str,
        input: Any = MISSING,
        *,
        instance_id: str | None = None,
        registration_id: str | None = None,
        surface_version: str | None = None,
        confirmation_id: str | None = None,
        invocation_id: str | None = None,
        consumer: Consumer | None = None,
    ) -> InvocationResult:
        """:meth:`invoke` from a plain (sync) test: the same keywords, run to completion on the
        surface's own event loop. Works beside pytest-playwright's sync ``page`` in one session
        (whose event loop stays set on the test thread): the loop then runs in a worker thread."""
        return self._run(
            lambda: self.invoke(
                capability_id,
                input,
                instance_id=instance_id,
                registration_id=registration_id,
                surface_version=surface_version,
                confirmation_id=confirmation_id,
                invocation_id=invocation_id,
                consumer=consumer,
            )
        )

    def read(self, capability_id: str, *, instance_id: str | None = None) -> Any:
        """:meth:`observe` from a plain (sync) test."""
        return self._run(lambda: self.observe(capability_id, instance_id=instance_id))

    def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        loop = self._loop

        async def run() -> T:
            return await make()

        if running_loop_or_none() is None:
            return loop.run_until_complete(run())
        # A loop is set on this thread (Playwright's sync API keeps one there between its calls,
        # and so does an async test): run ours beside it, one call at a time.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentsurface-test") as pool:
            return pool.submit(loop.run_until_complete, run()).result()

    def _surface_state(self) -> SurfaceState:
        registry = self.registry
        return SurfaceState(registry.version, tuple(r.registration_id for r in registry.registrations()))

    # ------------------------------------------------------------------ records

    def events(self) -> list[SurfaceEvent]:
        return list(self._events)

    def audit_log(self) -> list[AuditEvent]:
        return [] if self._audit is None else self._audit.events()

    def __enter__(self) -> TestSurface:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop following the registry's events and close the registry."""
        self._unsubscribe()
        self._unsubscribe_host()
        self.registry.close()
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()


def create_test_surface(
    *,
    contracts: Iterable[Any] = (),
    authority: CapabilityAuthority | None = None,
    registry: AgentSurfaceRegistry | None = None,
    consumer: Consumer = TEST_CONSUMER,
    host: Mapping[str, Any] | None = None,
    clock: ManualClock | None = None,
    limits: Limits | None = None,
    environment: Environment = "test",
    policies: Sequence[Policy] = (),
    on_register: Callable[[Mapping[str, Any]], Literal["accept", "reject"]] | None = None,
    on_duplicate_instance: Literal["reject", "replace"] = "reject",
    duplicate_suffix_policy: Literal["off", "warn", "error"] = "warn",
    route: Callable[[], Mapping[str, Any] | None] | None = None,
    procedure_executor: ProcedureExecutor | None = None,
) -> TestSurface:
    """A harness over ``registry``, or over a new registry whose authority is ``authority`` or a
    test authority compiled from ``contracts`` (component classes or contract objects).

    The harness owns the clock (manual), the host context (``host``, swapped by ``as_host``) and
    the audit sink (kept in memory for ``audit_log()``); the other keywords are
    ``AgentSurfaceRegistry``'s, for a new registry only."""
    host_values: dict[str, Any] = dict(host or {})
    if registry is not None:
        if not isinstance(registry.clock, ManualClock):
            raise ValueError(
                "pass a registry created with clock=ManualClock() (or let the harness create it)"
            )
        registry._context = lambda: host_values  # the harness owns the host context
        return TestSurface(registry, registry.clock, consumer, host_values, None)
    if authority is None:
        items = list(contracts)
        if not items:
            raise ValueError("create_test_surface needs contracts=[...], an authority or a registry")
        authority = CapabilityAuthority.from_manifest(compile_manifest(items))
    manual = clock or ManualClock()
    audit = MemoryAuditSink(capacity=10_000)
    created = AgentSurfaceRegistry(
        authority=authority,
        environment=environment,
        context=lambda: host_values,
        policies=policies,
        on_register=on_register,
        on_duplicate_instance=on_duplicate_instance,
        duplicate_suffix_policy=duplicate_suffix_policy,
        route=route,
        limits=limits,
        clock=manual,
        audit=audit,
        procedure_executor=procedure_executor,
    )
    return TestSurface(created, manual, consumer, host_values, audit)
