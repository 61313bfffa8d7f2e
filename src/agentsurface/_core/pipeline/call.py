"""The per-call context: built once when a call enters the pipeline, read by every phase.

What must not drift within one call is computed once and frozen: the host context (so a
policy and the handler see the same host), and the resolved ``CallTarget`` (registration, entry,
policy context). What the phases learn as they go (validated input, evidence, timings) is
recorded on the call in order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, TypeAlias

from ..consumer import Consumer
from ..contracts.context import CancelSignal
from ..jsonvalue import JsonValue
from ..policies.base import Decision, Policy, PolicyContext
from ..records import record
from ..registrations.entries import CapabilityEntry
from ..registrations.registration import Registration
from .confirmation import ConfirmationRecord
from .dedupe import Fingerprint
from .invocation import Invocation

if TYPE_CHECKING:
    from .runtime import Pipeline


#: What a phase hands the pipeline's entry (``pipeline.start``): None when it is done, or an
#: awaitable of what it must wait for (a queue slot, an async policy, an async handler). Only
#: the entry tells the two apart: it answers now, or hands the rest of the call back to await.
Wait: TypeAlias = Awaitable[None] | None

#: ``Admitted.plain_input`` of a call whose input identity did not copy.
UNCOPIED: Any = object()


# Admitted and CallTarget are never changed once made, yet not frozen: both are made on every
# invocation, and a mutable record builds in under half a hot frozen one's time (see records).
@record(frozen=False, eq=False)
class Admitted:
    """A fresh call: its dedupe key and its request's fingerprint (callers that join it while it
    runs wait on a future the dedupe cache makes only when the first one arrives), and the
    plain copy of its input identity made (``UNCOPIED`` if none): phase 5 need not check it again."""

    invocation_id: str
    key: str
    fingerprint: Fingerprint
    plain_input: Any


@record(frozen=False, eq=False)
class CallTarget:
    """What resolution (phase 2) found: fixed for the rest of the call."""

    reg: Registration
    entry: CapabilityEntry
    policy: PolicyContext | None  # with the invocation id, without agent input; None: no policies
    discovery: Decision  # the policies' discovery vote, taken once at resolution


@record(frozen=False, eq=False)
class Call:
    pipeline: Pipeline
    request: Invocation
    invocation_id: str
    consumer: Consumer
    host: Mapping[str, Any]  # computed once: every policy and the handler see this host
    timeout: float | None  # the caller's override, else the entry's
    cancelled_before_start: bool
    started: float
    start_version: int
    plain_input: Any = UNCOPIED  # Admitted.plain_input
    # Phase 5 found that copy small: a lazy fingerprint may keep it (settlement.remember).
    small_input: bool = False
    signal: CancelSignal = field(default_factory=CancelSignal)  # what the handler sees
    # Aborting ``settle`` settles the invocation now (timeout, external cancel, disposal,
    # unmount of a non-navigation call) and also aborts ``signal``. A navigation's unmount
    # aborts only ``signal``: the handler may abandon, but the router's answer settles it.
    settle: CancelSignal = field(default_factory=CancelSignal)
    resolved: CallTarget | None = None
    # The same target, for the phases after resolution (a plain slot: read several times a
    # call; reading it before resolution sets it raises AttributeError).
    target: CallTarget = field(init=False)
    # Learned by the phases, in order:
    value: Any = None  # what the handler receives (5)
    effective: JsonValue = None  # the validated effective input as JSON (5)
    bound: JsonValue = None  # a procedure reference's bound values, as bind() gave them (5)
    invoke_ctx: PolicyContext | None = None  # the policy context with effective input (6)
    settling_policies: Sequence[Policy] = ()  # their on_invoke ran (6)
    confirmation: ConfirmationRecord | None = None  # consumed approval evidence (6)
    release: Callable[[], None] | None = None  # the admission slot (8)
    queue_wait: float | None = None  # seconds (8)
    raw_output: Any = None  # what the handler returned (9)
    execution: float | None = None  # seconds (9)
    ended_at: float | None = None  # registry clock, when the handler's run ended (9)
    settled: bool = False  # (10)
    settled_at: float | None = None  # registry clock (10)

    def __post_init__(self) -> None:
        # settle.add_listener(signal.abort), without its remover: both signals are new, and
        # the link lasts as long as the call.
        self.settle._callbacks.append(self.signal.abort)


    def untrack(self) -> None:
        """Forget this call's signals on its registration (it no longer runs there)."""
        if self.resolved is not None:
            inflight = self.resolved.reg.inflight
            inflight.discard(self.signal)
            inflight.discard(self.settle)
