"""Built-in policies. Host semantics (who is a user, which permissions exist) are injected.

Placement follows the design: authentication, permission, tenant, environment and rate limits
gate before input (``on_authorize``); ``audit`` enriches settled calls; ``require_confirmation``
decides at the input-aware phase.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..audit import AuditEvent, AuditSink, MemoryAuditSink, Settled
from ..clock import iso
from ..errors import CapabilityFailure, error
from ..jsonvalue import JsonValue
from .base import Decision, Outcome, Policy, PolicyContext


class _Gate(Policy):
    """A policy that hides at discovery and refuses at authorization when ``allowed`` is false."""

    def __init__(self, name: str, allowed: Callable[[PolicyContext], bool], refusal: Callable[[], CapabilityFailure]):
        self.name = name
        self._allowed = allowed
        self._refusal = refusal

    def on_discovery(self, ctx: PolicyContext) -> Decision | Outcome | None:
        return None if self._allowed(ctx) else "hide"

    def on_authorize(self, ctx: PolicyContext) -> None:
        if not self._allowed(ctx):
            raise self._refusal()


def authenticated(*, key: str = "user") -> Policy:
    """Requires ``host[key]`` to be set. Hidden at discovery; NOT_AUTHENTICATED at invocation."""
    return _Gate(
        "authenticated",
        lambda ctx: bool(ctx.host.get(key)),
        lambda: CapabilityFailure(error("NOT_AUTHENTICATED", "The user is not signed in. Ask the user to sign in.")),
    )


def has_permission(permission: str, check: Callable[[Mapping[str, Any], str], bool]) -> Policy:
    """Delegates to the host's authorizer. Hidden at discovery; NOT_AUTHORIZED at invocation."""

    def allowed(ctx: PolicyContext) -> bool:
        try:
            return bool(check(ctx.host, permission))
        except Exception:
            return False  # an authorizer that fails denies

    return _Gate(
        f"has_permission:{permission}",
        allowed,
        lambda: CapabilityFailure(error("NOT_AUTHORIZED", "This call is not permitted for the current user.", origin="client")),
    )


def tenant_boundary(
    *,
    current: Callable[[Mapping[str, Any]], str | None],
    expected: Callable[[PolicyContext], str | None],
) -> Policy:
    """Hides unless ``current(host) == expected(ctx)`` (e.g. the tenant in ``internal`` metadata).

    A component with no expected tenant (``expected`` gives ``None``) is tenant-agnostic and
    stays visible: navigation and toolbars must not vanish under a registry-level boundary.
    """

    def allowed(ctx: PolicyContext) -> bool:
        try:
            theirs = expected(ctx)
            if theirs is None:
                return True
            mine = current(ctx.host)
        except Exception:
            return False  # a failing selector denies
        return mine is not None and mine == theirs

    return _Gate(
        "tenant_boundary",
        allowed,
        lambda: CapabilityFailure(error("NOT_AUTHORIZED", "This call is not permitted for the current user.", origin="client")),
    )


def environment(allowed: Sequence[str]) -> Policy:
    """Only in the listed environments of the registry (``AgentSurfaceRegistry(environment=...)``);
    hidden elsewhere. The host context has no say: it is not where the environment lives."""
    if isinstance(allowed, str):  # "test" would read as the characters 't', 'e', 's'
        raise TypeError(f"environment() takes a list of environment names, got {allowed!r}")
    names = frozenset(allowed)
    return _Gate(
        "environment",
        lambda ctx: ctx.environment in names,
        lambda: CapabilityFailure(error("CAPABILITY_NOT_FOUND", "This capability is not on the current surface.")),
    )


class RateLimitPolicy(Policy):
    """At most ``limit`` calls per ``window`` seconds per (consumer, capability). Advisory."""

    name = "rate_limit"

    def __init__(self, limit: int, window: float) -> None:
        if limit < 1 or window <= 0:
            raise ValueError("rate_limit needs limit >= 1 and window > 0")
        self.limit = limit
        self.window = window
        self._calls: dict[tuple[str, str], deque[float]] = {}

    def on_authorize(self, ctx: PolicyContext) -> None:
        now = ctx.now()
        key = (ctx.consumer.key, ctx.capability_id)
        calls = self._calls.get(key)
        if calls is None:
            calls = self._calls[key] = deque()
        while calls and now - calls[0] >= self.window:
            calls.popleft()
        if len(calls) >= self.limit:
            retry_ms = int(max(0.0, self.window - (now - calls[0])) * 1000)
            raise CapabilityFailure(error(
                "RATE_LIMITED", "Too many calls; wait before retrying.", reason="rate", retryAfterMs=retry_ms
            ))
        calls.append(now)
        if len(self._calls) > 10_000:  # bound memory: forget idle keys
            for stale in [k for k, v in self._calls.items() if not v or now - v[-1] >= self.window]:
                del self._calls[stale]


def rate_limit(*, limit: int, window: float) -> Policy:
    return RateLimitPolicy(limit, window)


class RequireConfirmation(Policy):
    """Escalates the call to a required confirmation, optionally only when ``when(ctx)``."""

    name = "require_confirmation"

    def __init__(
        self,
        when: Callable[[PolicyContext], bool] | None = None,
        summary: Callable[[JsonValue], str] | None = None,
    ) -> None:
        self._when = when
        self.summary = summary

    def requires_confirmation(self, ctx: PolicyContext) -> bool:
        return True if self._when is None else bool(self._when(ctx))

    def confirmation_summary(self, effective_input: JsonValue) -> str | None:
        return None if self.summary is None else self.summary(effective_input)


def require_confirmation(
    *, when: Callable[[PolicyContext], bool] | None = None, summary: Callable[[JsonValue], str] | None = None
) -> Policy:
    return RequireConfirmation(when, summary)


class AuditPolicy(Policy):
    """Forwards the calls it sees (with the validated effective input at ``full``) to a sink."""

    name = "audit"

    def __init__(self, sink: AuditSink | None, level: str) -> None:
        if level not in ("metadata", "full"):
            raise ValueError("audit level must be 'metadata' or 'full'")
        self.sink: AuditSink = sink or MemoryAuditSink()
        self.level = level

    def on_invoke(self, ctx: PolicyContext) -> None:
        payload = {"input": ctx.effective_input} if self.level == "full" else None
        self._record(AuditEvent(
            at=iso(ctx.now()), type="invocation-started", capability_id=ctx.capability_id,
            registration_id=ctx.registration_id, invocation_id=ctx.invocation_id,
            consumer_id=ctx.consumer.id, payload=payload,
        ))

    def on_settled(self, ctx: PolicyContext, settled: Settled) -> None:
        """A call whose start was recorded here gets its end recorded here too (docs/06)."""
        self._record(settled.audit_event(self.level))

    def _record(self, event: AuditEvent) -> None:
        with contextlib.suppress(Exception):  # a sink must never break the call
            self.sink.record(event)


def audit(sink: AuditSink | None = None, level: str = "metadata") -> Policy:
    return AuditPolicy(sink, level)
